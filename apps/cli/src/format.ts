import type { ClusterSummary, Job, JobEvent, JobExplanation, JobStreamEvent, Node, Queue, UsageRow } from '@gantry/client';
import { Column, age } from './table';

const resources = (j: Job) => {
  const r = j.resources;
  return `${r.gpus ? `${r.gpus}×${r.gpuModel ?? 'GPU'} ` : ''}${r.cpuCores}c ${r.memoryMiB}Mi${j.nodes > 1 ? ` ×${j.nodes}` : ''}`;
};

export const JOB_COLUMNS: Column<Job>[] = [
  { header: 'ID', value: (j) => j.id },
  { header: 'NAME', value: (j) => j.name, shrink: true },
  { header: 'QUEUE', value: (j) => j.queue, shrink: true },
  { header: 'OWNER', value: (j) => j.owner, shrink: true, optional: true },
  { header: 'STATE', value: (j) => j.state + (j.cancelRequested && !j.finishedAt ? '*' : '') },
  { header: 'ATTEMPT', value: (j) => String(j.attempt), optional: true },
  { header: 'RESOURCES', value: resources, shrink: true, optional: true },
  { header: 'AGE', value: (j) => age(j.createdAt), optional: true },
  { header: 'REASON', value: (j) => j.pendingReason ?? j.reason ?? '', shrink: true, optional: true },
];

export const EVENT_COLUMNS: Column<JobEvent>[] = [
  { header: 'SEQ', value: (e) => String(e.seq) },
  { header: 'AT', value: (e) => e.at },
  { header: 'TYPE', value: (e) => e.type },
  { header: 'CHANGE', value: (e) => (e.fromState || e.toState ? `${e.fromState ?? ''} -> ${e.toState ?? ''}` : '') },
  { header: 'ATTEMPT', value: (e) => (e.attempt === undefined ? '' : String(e.attempt)) },
  { header: 'NODES', value: (e) => (e.nodeIds ?? []).join(','), shrink: true },
  { header: 'REASON', value: (e) => e.reason ?? '', shrink: true },
];

/** One line per streamed event, for people: when, which job, what. */
export function eventLine(e: JobStreamEvent, withJob: boolean): string {
  const change = e.toState ? ` ${e.fromState ?? ''}${e.fromState ? ' -> ' : ''}${e.toState}` : '';
  const extra = [
    e.attempt !== undefined ? `attempt=${e.attempt}` : '',
    e.nodeIds?.length ? `nodes=${e.nodeIds.join(',')}` : '',
    e.reason ? `reason=${e.reason}` : '',
  ]
    .filter(Boolean)
    .join(' ');
  return `${e.at}  ${withJob ? `${e.jobId}  ` : ''}#${e.seq} ${e.type}${change}${extra ? `  ${extra}` : ''}`;
}

export const QUEUE_COLUMNS: Column<Queue>[] = [
  { header: 'NAME', value: (q) => q.name },
  { header: 'PRIORITY', value: (q) => String(q.priority) },
  { header: 'WEIGHT', value: (q) => String(q.weight) },
  { header: 'QUOTA GPUS', value: (q) => (q.quota.gpus === null || q.quota.gpus === undefined ? 'unlimited' : String(q.quota.gpus)) },
  { header: 'GPUS HELD', value: (q) => String(q.usage.gpusHeld) },
  { header: 'QUEUED', value: (q) => String(q.usage.jobsQueued) },
  { header: 'RUNNING', value: (q) => String(q.usage.jobsRunning) },
  // Slurm's factor (1 unused, 0.5 at its share) with the share it is measured against (ADR 0038).
  { header: 'FAIR SHARE', value: (q) => (q.fairShare ? `${q.fairShare.factor.toFixed(2)} (share ${Math.round(q.fairShare.share * 100)} %)` : '-') },
];

export const NODE_COLUMNS: Column<Node>[] = [
  { header: 'ID', value: (n) => n.id },
  { header: 'HEALTH', value: (n) => n.health + (n.cordoned ? ',CORDONED' : '') + (n.drainDeadline ? ',DRAINING' : '') },
  { header: 'ZONE', value: (n) => n.zone, shrink: true },
  { header: 'RACK', value: (n) => n.rack, shrink: true },
  { header: 'GPUS', value: (n) => (n.gpus.total ? `${n.gpus.allocated}/${n.gpus.total} ${n.gpus.model ?? ''}`.trim() : '-') },
  { header: 'CPU', value: (n) => String(n.cpuCores) },
  { header: 'MEMORY', value: (n) => `${n.memoryMiB}Mi` },
  { header: 'LAST SEEN', value: (n) => age(n.lastHeartbeatAt) },
];

/** What `gantry nodes describe` says about a node's trust (ADR 0035): why it is cordoned, what is pinned, what it reports beyond it. */
export function nodeTrustLines(n: Node): string[] {
  const d = n.declared;
  const declared = d
    ? `${d.gpus ? `${d.gpus.count}×${d.gpus.model}` : 'no GPUs'}, ${d.cpuCores} cores, ${d.memoryMiB}Mi, address ${d.address ?? '(first reported)'}`
    : 'nothing pinned yet (the first inventory the node reports will be)';
  return [
    `Cordoned:       ${n.cordoned ? `yes (${n.cordonReason ?? 'unknown reason'})` : 'no'}`,
    `Start failures: ${n.startFailures} in a row`,
    `Declared:       ${declared}`,
    ...(n.exceeded.length > 0 ? [`Reports beyond: ${n.exceeded.join(', ')} (not believed)`] : []),
  ];
}

/** `gantry top`, for people. */
export function summaryLines(s: ClusterSummary): string[] {
  const counts = (o: Record<string, number>) =>
    Object.entries(o)
      .map(([k, v]) => `${k} ${v}`)
      .join('  ');
  const u = s.utilisation;
  const pct = (v: number | null | undefined) => (v === null || v === undefined ? '-' : `${Math.round(v * 100)}%`);
  return [
    `nodes   ${s.nodes}: ${counts(s.nodesByHealth as unknown as Record<string, number>)}`,
    `jobs    ${counts(s.jobsByState)}`,
    `usage   gpu ${pct(u.gpu)}  cpu ${pct(u.cpu)}`,
    '',
    ...s.gpus.map((g) => `gpus    ${(g.model ?? 'none').padEnd(8)} ${g.allocated}/${g.total} allocated, ${g.free} free`),
  ];
}

/** `gantry explain` and describe's summary of it, for people: position, estimate, every blocker with its deficit, what would let it start. */
export function explanationLines(e: JobExplanation): string[] {
  const deficit = (d: JobExplanation['blockers'][number]['deficit']) =>
    [d.gpus ? `${d.gpus} GPUs` : '', d.cpuCores ? `${d.cpuCores} cores` : '', d.memoryMiB ? `${d.memoryMiB} MiB` : ''].filter(Boolean).join(', ');
  return [
    `Pending reason:  ${e.pendingReason ?? '-'}`,
    `Position:        ${e.position.queue} in its queue, ${e.position.overall} overall`,
    `Estimated start: ${e.estimatedStartAt ?? 'unknown (what blocks it has no deadline, or no end lifts it)'}`,
    e.blockers.length ? 'Blockers:' : 'Blockers:        none (the next scheduling cycle places it)',
    ...e.blockers.map((b) => `  ${b.reason}${deficit(b.deficit) ? ` (short ${deficit(b.deficit)})` : ''}: ${b.detail}`),
    ...(e.wouldStartWith.length ? ['Would start now with:', ...e.wouldStartWith.map((c) => `  ${c.change}: ${c.detail}`)] : []),
  ];
}

/** A job's retry policy on one line. */
export function retryPolicyLine(p: Job['retryPolicy']): string {
  const codes = p.retryOnExitCodes.length ? `exit codes ${p.retryOnExitCodes.join(',')}` : 'lost attempts only';
  return `${p.maxRetries} retries (${codes}), backoff ${p.backoffSeconds} s up to ${p.maxBackoffSeconds} s`;
}

const hours = (seconds: number) => (seconds / 3600).toFixed(2);

/** `gantry usage`'s table: the bucket, the grouped-by keys, then hours (the JSON and CSV keep exact seconds). */
export function usageColumns(groupBy: readonly string[]): Column<UsageRow>[] {
  const keys: Array<[string, string, (r: UsageRow) => string]> = [
    ['owner', 'OWNER', (r) => r.owner ?? ''],
    ['queue', 'QUEUE', (r) => r.queue ?? ''],
    ['gpuModel', 'GPU MODEL', (r) => r.gpuModel ?? '-'],
  ];
  return [
    { header: 'START', value: (r) => r.start },
    ...keys.filter(([k]) => groupBy.includes(k)).map(([, header, value]) => ({ header, value, shrink: true })),
    { header: 'GPU-HOURS', value: (r) => hours(r.gpuSeconds) },
    { header: 'CPU-HOURS', value: (r) => hours(r.cpuSeconds), optional: true },
    { header: 'ATTEMPTS', value: (r) => String(r.attempts), optional: true },
    { header: 'JOBS', value: (r) => String(r.jobs), optional: true },
  ];
}

import { DataSource } from 'typeorm';
import { JobReportMessage } from '@gantry/contracts';
import { USAGE_GRANULARITIES, UsageCell, UsageRange, decayedGpuSeconds } from '@gantry/domain';
import {
  JobRecord,
  autocommit,
  casUpdateJob,
  commitPlacementsThatHold,
  deleteJobsFinishedBefore,
  deleteUsageBefore,
  findJob,
  foldUsage,
  inTransaction,
  loadNodes,
  loadUsageReport,
  releaseRank,
} from '@gantry/persistence';
import { WakeUpSender } from '@gantry/messaging';
import { makeJob, makeNode, openDataSource, placeJob, seededRandom, testWakeUpSender, uniqueTag } from '@gantry/testing';
import { AttemptLossApplier } from '../src/attempt-loss-applier';
import { ReconcilerEnv } from '../src/config';
import { JobReportApplier } from '../src/job-report-applier';

/*
 * The usage ledger (contract 5.4, ADR 0037) on the real report and loss paths: every rank that held
 * resources leaves exactly one record, with the time it held them; folding into the hourly rollup
 * changes no report; the rows of any split of a range add up to the range; records outlive their jobs.
 */

jest.setTimeout(60_000);

const H = 3_600_000;
const HALF_LIFE_S = 168 * 3600;

let ds: DataSource;
let applier: JobReportApplier;
let losses: AttemptLossApplier;
let wake: { sender: WakeUpSender; close: () => Promise<void> };
beforeAll(async () => {
  ds = await openDataSource();
  wake = await testWakeUpSender('usage-ledger-test');
  applier = new JobReportApplier(ds, wake.sender, new ReconcilerEnv());
  losses = new AttemptLossApplier(ds, wake.sender, { GANTRY_NODE_START_FAILURES: 3 });
});
afterAll(async () => {
  await wake.close();
  await ds.destroy();
});

async function placed(
  owner: string,
  opts: { nodes?: number; gpus?: number; maxRetries?: number; at?: Date; model?: string | null } = {},
): Promise<{ job: JobRecord; nodeIds: string[] }> {
  const nodeIds: string[] = [];
  for (let i = 0; i < (opts.nodes ?? 1); i++)
    nodeIds.push(
      (
        await makeNode()
          .gpus(8, opts.model === undefined ? 'H100' : opts.model)
          .insert(ds)
      ).id,
    );
  const job = await makeJob()
    .owner(owner)
    .gpus(opts.gpus ?? 2)
    .cpu(3)
    .gang(nodeIds.length)
    .maxRetries(opts.maxRetries ?? 0)
    .insert(ds);
  return { job: await placeJob(ds, job, nodeIds, { now: opts.at }), nodeIds };
}

const report = (job: JobRecord, nodeId: string, state: JobReportMessage['state'], over: Partial<JobReportMessage> = {}): JobReportMessage =>
  ({ nodeId, jobId: job.id, attempt: job.attempt || 1, state, at: Date.now(), ...over }) as JobReportMessage;

/** Every rank of the owner's jobs beside its usage records (as many as there are). */
async function ranksWithRecords(owner: string) {
  return (await ds.query(
    `SELECT a.job_id, a.attempt, a.rank, a.gpus, a.cpu_cores, a.created_at, a.released_at,
       (SELECT count(*)::int FROM usage_records u WHERE (u.job_id, u.attempt, u.rank) = (a.job_id, a.attempt, a.rank)) AS records,
       u.gpus AS u_gpus, u.cpu_cores AS u_cpu, u.started_at, u.ended_at, u.outcome, u.owner, u.gpu_model, u.nodes
     FROM attempt_nodes a JOIN jobs j ON j.id = a.job_id LEFT JOIN usage_records u ON (u.job_id, u.attempt, u.rank) = (a.job_id, a.attempt, a.rank)
     WHERE j.owner = $1 ORDER BY a.created_at, a.job_id, a.attempt, a.rank`,
    [owner],
  )) as Array<Record<string, any>>;
}

/** GPU-ms the owner's ranks held in [fromMs, toMs), running ones up to `nowMs`: from attempt_nodes, not the ledger. */
async function heldGpuMs(owner: string, fromMs: number, toMs: number, nowMs: number): Promise<number> {
  let sum = 0;
  for (const r of await ranksWithRecords(owner)) {
    const end = Math.min(r.released_at ? r.released_at.getTime() : nowMs, toMs);
    sum += r.gpus * Math.max(0, end - Math.max(r.created_at.getTime(), fromMs));
  }
  return sum;
}

const totals = (cells: UsageCell[]) =>
  cells.reduce((s, c) => ({ gpuMs: s.gpuMs + c.gpuMs, cpuMs: s.cpuMs + c.cpuMs, attempts: s.attempts + c.attempts, jobs: s.jobs + c.jobs }), {
    gpuMs: 0,
    cpuMs: 0,
    attempts: 0,
    jobs: 0,
  });
const fold = (now = new Date(), limit = 100_000) => inTransaction(ds, (sql) => foldUsage(sql, now, HALF_LIFE_S, limit));
const hourFloor = (ms: number) => Math.floor(ms / H) * H;

describe('usage records', () => {
  it('every path that ends an attempt leaves one record per rank, exactly the time it held', async () => {
    const owner = uniqueTag('usage-paths');
    // 1. Succeeds; its reports are delivered twice.
    const ok = await placed(owner);
    for (let i = 0; i < 2; i++) {
      await applier.apply(report(ok.job, ok.nodeIds[0], 'RUNNING'));
      await applier.apply(report(ok.job, ok.nodeIds[0], 'SUCCEEDED', { exitCode: 0 }));
    }
    // 2. A gang: one rank fails, the other is killed and reports its end later.
    const gang = await placed(owner, { nodes: 2, gpus: 4 });
    await applier.apply(report(gang.job, gang.nodeIds[1], 'FAILED', { exitCode: 2 }));
    await applier.apply(report(gang.job, gang.nodeIds[0], 'CANCELLED'));
    // 3. A retry: attempt 1 is lost with its node, attempt 2 is placed and succeeds.
    const retried = await placed(owner, { maxRetries: 1 });
    await applier.apply(report(retried.job, retried.nodeIds[0], 'RUNNING'));
    expect(await losses.lose(retried.job.id, 1, retried.nodeIds[0], 'NODE_LOST')).toBe('requeued');
    const queued = (await findJob(autocommit(ds), retried.job.id))!;
    expect(queued.state).toBe('QUEUED');
    const [node] = await loadNodes(autocommit(ds), retried.nodeIds);
    await commitPlacementsThatHold(
      autocommit(ds),
      [
        {
          jobId: queued.id,
          expectedVersion: queued.version,
          attempt: 2,
          nodeIds: retried.nodeIds,
          gpuIndices: [[0, 1]],
          perRank: { gpus: 2, cpuCores: 3, memoryMiB: 1024 },
          commands: [],
        },
      ],
      new Map([[node.id, node.version]]),
      new Date(),
    );
    const second = (await findJob(autocommit(ds), retried.job.id))!;
    await applier.apply(report(second, retried.nodeIds[0], 'SUCCEEDED', { exitCode: 0, attempt: 2 }));
    // 4. Preempted: the attempt told to stop for a preemptor ends.
    const preempted = await placed(owner);
    await applier.apply(report(preempted.job, preempted.nodeIds[0], 'RUNNING'));
    const running = (await findJob(autocommit(ds), preempted.job.id))!;
    await casUpdateJob(autocommit(ds), running.id, running.version, { preemptedAttempt: 1, preemptedFor: running.id }, 0, new Date());
    await applier.apply(report(preempted.job, preempted.nodeIds[0], 'CANCELLED'));
    // 5. Cancelled by its owner.
    const cancelled = await placed(owner);
    const c = (await findJob(autocommit(ds), cancelled.job.id))!;
    await casUpdateJob(autocommit(ds), c.id, c.version, { cancelRequested: true }, 0, new Date());
    await applier.apply(report(cancelled.job, cancelled.nodeIds[0], 'CANCELLED'));
    // 6. A gang whose node died: both ranks released by the loss, twice over.
    const lost = await placed(owner, { nodes: 2 });
    await losses.lose(lost.job.id, 1, lost.nodeIds[0], 'NODE_LOST');
    await losses.lose(lost.job.id, 1, lost.nodeIds[0], 'NODE_LOST');
    // 7. Still running: no record yet.
    const live = await placed(owner, { model: null, gpus: 0 });

    const ranks = await ranksWithRecords(owner);
    expect(ranks).toHaveLength(10);
    for (const r of ranks) {
      if (r.released_at === null) {
        expect(r.records).toBe(0);
        continue;
      }
      expect(r.records).toBe(1);
      expect([r.u_gpus, r.u_cpu, r.started_at.getTime(), r.ended_at.getTime(), r.owner]).toEqual([
        r.gpus,
        r.cpu_cores,
        r.created_at.getTime(),
        r.released_at.getTime(),
        owner,
      ]);
    }
    const outcome = (job: JobRecord) => ranks.filter((r) => r.job_id === job.id).map((r) => `${r.attempt}:${r.outcome}`);
    expect(outcome(ok.job)).toEqual(['1:SUCCEEDED']);
    expect(outcome(gang.job).sort()).toEqual(['1:CANCELLED', '1:FAILED']);
    expect(outcome(retried.job)).toEqual(['1:NODE_LOST', '2:SUCCEEDED']);
    expect(outcome(preempted.job)).toEqual(['1:PREEMPTED']);
    expect(outcome(cancelled.job)).toEqual(['1:CANCELLED']);
    expect(outcome(lost.job)).toEqual(['1:NODE_LOST', '1:NODE_LOST']);
    expect(outcome(live.job)).toEqual(['1:null']);
    expect(ranks.filter((r) => r.job_id === gang.job.id).map((r) => [r.gpu_model, r.nodes])).toEqual([
      ['H100', 2],
      ['H100', 2],
    ]);

    // The report counts every rank exactly, before and after the fold, the running one up to now.
    const now = new Date();
    const range: UsageRange = {
      fromMs: hourFloor(ranks[0].created_at.getTime()),
      toMs: hourFloor(now.getTime()) + H,
      granularity: 'hour',
      groupBy: ['owner', 'gpuModel'],
    };
    const before = await loadUsageReport(autocommit(ds), range, owner, now);
    expect(totals(before)).toEqual({ gpuMs: await heldGpuMs(owner, range.fromMs, range.toMs, now.getTime()), cpuMs: expect.any(Number), attempts: 8, jobs: 7 });
    expect(totals(before).gpuMs).toBeGreaterThan(0);
    await fold();
    expect(await loadUsageReport(autocommit(ds), range, owner, now)).toEqual(before);
    expect(await ds.query(`SELECT count(*)::int AS n FROM usage_records WHERE owner = $1 AND NOT folded`, [owner])).toEqual([{ n: 0 }]);
  });
});

describe('usage reports', () => {
  it('the rows of any split of a range add up to the range, folded or not, running ranks up to now (seeded property)', async () => {
    const owner = uniqueTag('usage-splits');
    const random = seededRandom(41);
    const now = new Date();
    const t0 = hourFloor(now.getTime()) - 72 * H;
    // Ranks spread over three days, some ended, some still running, a gang among them.
    for (let i = 0; i < 24; i++) {
      const start = new Date(t0 + Math.floor(random() * 70 * H));
      const { job, nodeIds } = await placed(owner, {
        at: start,
        nodes: i % 8 === 0 ? 2 : 1,
        gpus: 1 + Math.floor(random() * 8),
        model: i % 3 === 0 ? 'A100' : 'H100',
      });
      if (i % 5 === 4) continue;
      const end = new Date(Math.min(start.getTime() + Math.floor(random() * 20 * H), now.getTime() - 1000));
      for (const nodeId of nodeIds) await inTransaction(ds, (sql) => releaseRank(sql, job.id, 1, nodeId, end, 'SUCCEEDED'));
    }
    // Fold some only: the oldest ended first, and these are older than anything else in the database.
    const foldedAt = new Date();
    const mine = async (folded: boolean) =>
      (await ds.query(`SELECT count(*)::int AS n FROM usage_records WHERE owner = $1 AND folded = $2`, [owner, folded]))[0].n as number;
    for (let i = 0; i < 1000 && (await mine(true)) < 8; i++) await fold(foldedAt, 1);
    expect(await mine(true)).toBe(8);
    expect(await mine(false)).toBeGreaterThan(0);

    const whole = { fromMs: t0, toMs: t0 + 73 * H };
    const expected = await heldGpuMs(owner, whole.fromMs, whole.toMs, now.getTime());
    for (let trial = 0; trial < 12; trial++) {
      const granularity = USAGE_GRANULARITIES[trial % 3];
      const cuts = [...new Set(Array.from({ length: 1 + Math.floor(random() * 4) }, () => t0 + (1 + Math.floor(random() * 72)) * H))].sort((a, b) => a - b);
      const bounds = [whole.fromMs, ...cuts, whole.toMs];
      const all = totals(await loadUsageReport(autocommit(ds), { ...whole, granularity, groupBy: [] }, owner, now));
      expect(all.gpuMs).toBe(expected);
      expect(all.attempts).toBe(24);
      expect(all.jobs).toBe(24);
      const parts = [];
      for (let i = 1; i < bounds.length; i++) {
        parts.push(
          totals(await loadUsageReport(autocommit(ds), { fromMs: bounds[i - 1], toMs: bounds[i], granularity, groupBy: ['queue', 'gpuModel'] }, owner, now)),
        );
      }
      expect(
        parts.reduce((s, p) => ({ gpuMs: s.gpuMs + p.gpuMs, cpuMs: s.cpuMs + p.cpuMs, attempts: s.attempts + p.attempts, jobs: s.jobs + p.jobs })),
      ).toEqual(all);
    }

    // Fair share got each folded rank's decayed GPU-seconds at the fold.
    const folded = (await ds.query(`SELECT gpus, started_at, ended_at FROM usage_records WHERE owner = $1 AND folded`, [owner])) as Array<{
      gpus: number;
      started_at: Date;
      ended_at: Date;
    }>;
    const [share] = await ds.query(`SELECT gpu_seconds, as_of FROM fair_share_usage WHERE owner = $1 AND queue = 'default'`, [owner]);
    expect(share.as_of.getTime()).toBe(foldedAt.getTime());
    expect(share.gpu_seconds).toBeCloseTo(
      folded.reduce((s, r) => s + decayedGpuSeconds(r.gpus, r.started_at.getTime(), r.ended_at.getTime(), foldedAt.getTime(), HALF_LIFE_S), 0),
      6,
    );
  });

  it('only the owner asked for is counted', async () => {
    const [a, b] = [uniqueTag('usage-a'), uniqueTag('usage-b')];
    const start = new Date(hourFloor(Date.now()) - 5 * H);
    await placed(a, { at: start, gpus: 1 });
    await placed(b, { at: start, gpus: 3 });
    const now = new Date();
    const range: UsageRange = { fromMs: start.getTime(), toMs: hourFloor(now.getTime()) + H, granularity: 'day', groupBy: ['owner'] };
    const rows = await loadUsageReport(autocommit(ds), range, a, now);
    expect(new Set(rows.map((r) => r.owner))).toEqual(new Set([a]));
    expect(totals(rows).gpuMs).toBe(now.getTime() - start.getTime());
  });
});

describe('usage retention', () => {
  it('records outlive their jobs, and go only past their own retention', async () => {
    const owner = uniqueTag('usage-retention');
    // Long ago, so that the sweeps below reach these rows and no other suite's.
    const start = new Date(Date.UTC(2001, 0, 1, 10));
    const { job, nodeIds } = await placed(owner, { at: start });
    await inTransaction(ds, (sql) => releaseRank(sql, job.id, 1, nodeIds[0], new Date(start.getTime() + 1.5 * H), 'SUCCEEDED'));
    const j = (await findJob(autocommit(ds), job.id))!;
    await casUpdateJob(autocommit(ds), j.id, j.version, { state: 'SUCCEEDED', finishedAt: new Date(start.getTime() + 1.5 * H) }, 0, new Date());
    const range: UsageRange = { fromMs: Date.UTC(2001, 0, 1), toMs: Date.UTC(2001, 0, 2), granularity: 'hour', groupBy: [] };
    const report = () => loadUsageReport(autocommit(ds), range, owner, new Date());
    const expected = [
      { start: start.getTime(), gpuMs: 2 * H, attempts: 1, jobs: 1 },
      { start: start.getTime() + H, gpuMs: H, attempts: 0, jobs: 0 },
    ];
    expect(await report()).toMatchObject(expected);

    // Job retention takes the job and its ranks, not its usage.
    expect(await deleteJobsFinishedBefore(autocommit(ds), new Date(Date.UTC(2001, 0, 2)), 100, new Date())).toBeGreaterThanOrEqual(1);
    expect(await findJob(autocommit(ds), job.id)).toBeNull();
    expect(await report()).toMatchObject(expected);
    await fold();
    expect(await report()).toMatchObject(expected);

    // Usage retention takes what ended before its cutoff, rollup hours too.
    await deleteUsageBefore(autocommit(ds), new Date(Date.UTC(2001, 0, 1, 11)), 1000);
    expect(await report()).toMatchObject([{ start: start.getTime() + H, gpuMs: H }]);
    await deleteUsageBefore(autocommit(ds), new Date(Date.UTC(2001, 0, 2)), 1000);
    expect(await report()).toEqual([]);
    expect(await ds.query(`SELECT count(*)::int AS n FROM usage_records WHERE owner = $1`, [owner])).toEqual([{ n: 0 }]);
  });
});

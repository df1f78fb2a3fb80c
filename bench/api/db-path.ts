/**
 * `node dist/bench/api/db-path.js`: the Postgres CPU one job's life costs, without the rest of the
 * stack. One connection runs, batch after batch, the statements the services run for a job: the
 * create (gateway), the outbox claim (relays), the placement commit (scheduler), the RUNNING and
 * SUCCEEDED reports (reconciler). The backend's own CPU time (from /proc) is divided by the jobs,
 * so the number does not move with what else the machine is doing, unlike wall-clock latency.
 *
 * Settings: DB_PATH_DATABASE_URL (a scratch database it recreates: gantry_bench_db_path),
 * DB_PATH_JOBS (4,000), DB_PATH_BATCH (jobs per statement, 10), DB_PATH_NODES (200),
 * DB_PATH_IDS=v4 for random job ids instead of time-ordered ones, DB_PATH_OUTBOX_VACUUM_ROWS (2,000, as the
 * relays; 0: never), DB_PATH_PREPARED=0 to send the hot statements as plain text (parsed and planned every time).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { foldReports } from '@gantry/domain';
import {
  JobCreation,
  JobReportWrite,
  PlacementWrite,
  PreparedStatement,
  Sql,
  autocommit,
  claimOutboxRows,
  commitPlacementsThatHold,
  createDataSource,
  createJobs,
  deleteClaimedOutboxRows,
  findJobsWithRanks,
  loadNodes,
  newJobId as timeOrderedJobId,
  OUTBOX_VACUUM_EVERY_ROWS,
  OutboxVacuumSchedule,
  upsertNodeTopology,
  vacuumOutbox,
  writeJobReports,
} from '@gantry/persistence';
import { numberFromEnv as env, recreateDatabase } from '@gantry/stack';
import { join } from 'node:path';

const url = process.env.DB_PATH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/gantry_bench_db_path';
const JOBS = env('DB_PATH_JOBS', 4000);
const BATCH = env('DB_PATH_BATCH', 10);
const NODES = env('DB_PATH_NODES', 200);
const PREPARED = process.env.DB_PATH_PREPARED !== '0';
/** Statements (by their first words) to send as text even when PREPARED, e.g. "WITH job_in,SELECT j.*". */
const AS_TEXT = (process.env.DB_PATH_AS_TEXT ?? '').split(',').filter(Boolean);
/** Job ids: time-ordered (v7, what the gateway issues) or random (v4, what it issued before 2026-12-04). */
const newJobId = process.env.DB_PATH_IDS === 'v4' ? randomUUID : timeOrderedJobId;
/** Vacuum the outbox after this many rows claimed, as the services' relays do (GANTRY_OUTBOX_VACUUM_ROWS); 0: never. */
const vacuums = new OutboxVacuumSchedule(env('DB_PATH_OUTBOX_VACUUM_ROWS', OUTBOX_VACUUM_EVERY_ROWS));

/** CPU seconds of one process, from /proc (utime + stime). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** The same statements, sent as text: Postgres parses and plans each call. */
function unprepared(sql: Sql, which: (text: string) => boolean = () => true): Sql {
  return {
    rows: (q: string | PreparedStatement, p?: unknown[]) => sql.rows(typeof q === 'string' || !which(q.text) ? q : q.text, p),
    afterCommit: sql.afterCommit,
  };
}

async function main(): Promise<void> {
  const root = join(__dirname, '..', '..', '..');
  await recreateDatabase(root, url, /^gantry_bench_/); // migrated too
  const ds = createDataSource({ url, poolSize: 1, applicationName: 'db-path' });
  await ds.initialize();
  const base = autocommit(ds);
  const sql = PREPARED ? unprepared(base, (t) => AS_TEXT.some((w) => t.trimStart().startsWith(w))) : unprepared(base);
  const [{ pid }] = await base.rows<{ pid: number }>('SELECT pg_backend_pid() AS pid');

  const nodeIds = Array.from({ length: NODES }, (_, i) => `db-path-${String(i).padStart(5, '0')}`);
  await upsertNodeTopology(
    base,
    nodeIds.map((id) => ({
      id,
      zone: 'z',
      rack: 'r',
      gpuModel: null,
      gpusTotal: 0,
      gpuIndices: [],
      cpuCores: 1_000_000,
      memoryMiB: 1_000_000_000,
      address: null,
      logsPort: null,
    })),
    new Date(),
  );

  let done = 0;
  let cpuAtStart = 0;
  let walAtStart = '0/0';
  // Backend CPU by step, for the batches counted.
  const steps: Record<string, number> = {};
  let mark = 0;
  let counting = false;
  const lap = (step: string) => {
    const now = cpuSeconds(pid);
    if (counting) steps[step] = (steps[step] ?? 0) + now - mark;
    mark = now;
  };
  const t0 = Date.now();
  for (let b = 0; done < JOBS; b++) {
    if (b === 5) {
      // The first batches prepare the statements and warm caches. The checkpoint puts every run at
      // the same place in the cycle: each page's first change after it is written whole to the WAL.
      await base.rows('CHECKPOINT');
      walAtStart = (await base.rows<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn'))[0].lsn;
      cpuAtStart = cpuSeconds(pid);
    }
    const counted = b >= 5;
    counting = counted;
    lap('');
    const now = new Date();
    // Gateway: a batch of creates.
    const creations: JobCreation[] = Array.from({ length: BATCH }, () => ({
      job: {
        id: newJobId(),
        owner: 'bench',
        queue: 'default',
        name: 'db-path',
        image: 'none',
        command: ['true'],
        env: { SIM_DURATION_MS: '1000' },
        labels: {},
        gpus: 0,
        gpuModel: null,
        cpuCores: 1,
        memoryMiB: 1024,
        nodes: 1,
        maxRetries: 0,
        traceParent: null,
        createdAt: now,
      },
      idempotency: { key: randomUUID(), bodySha256: 'h' },
    }));
    const created = (await createJobs(sql, creations, now, 86_400_000)).map((o) => (o.kind === 'created' ? o.job : null)!);
    lap('create');
    await claimOutbox(sql);
    lap('outbox');
    // Scheduler: one placement per job, spread over the nodes.
    const chosen = created.map((_, i) => nodeIds[(b * BATCH + i) % NODES]);
    const versions = new Map((await loadNodes(base, [...new Set(chosen)])).map((n) => [n.id, n.version]));
    lap('');
    const placements: PlacementWrite[] = created.map((j, i) => ({
      jobId: j.id,
      expectedVersion: j.version,
      attempt: 1,
      nodeIds: [chosen[i]],
      gpuIndices: [[]],
      perRank: { gpus: 0, cpuCores: 1, memoryMiB: 1024 },
      commands: [{ topic: 'db-path', key: chosen[i], value: { type: 'RUN', jobId: j.id } }],
    }));
    const { placed } = await commitPlacementsThatHold(sql, placements, versions, now);
    if (placed.length !== created.length) throw new Error(`placed ${placed.length} of ${created.length}`);
    lap('place');
    await claimOutbox(sql);
    lap('outbox');
    // Reconciler: RUNNING, then SUCCEEDED, each a batch of its own.
    for (const state of ['RUNNING', 'SUCCEEDED'] as const) {
      const found = await findJobsWithRanks(
        sql,
        created.map((j) => j.id),
      );
      lap('report.read');
      const writes: JobReportWrite[] = created.map((j, i) => {
        const { job, ranks } = found.get(j.id)!;
        const f = foldReports({ state: job.state, attempt: job.attempt, started: job.startedAt !== null, nodeIds: job.nodeIds, ranks }, [
          { nodeId: chosen[i], attempt: 1, state, exitCode: 0 },
        ]);
        return {
          jobId: job.id,
          expectedVersion: job.version,
          lastEventSeq: job.lastEventSeq,
          attempt: 1,
          state: f.state,
          start: f.start,
          end: f.end,
          events: f.events,
          ranks: f.ranks,
          retryAt: null,
        };
      });
      const { written } = await writeJobReports(sql, writes, [], new Date());
      if (written.size !== writes.length) throw new Error(`wrote ${written.size} of ${writes.length}`);
      lap('report.write');
      await claimOutbox(sql);
      lap('outbox');
    }
    if (counted) done += created.length;
  }
  const cpu = cpuSeconds(pid) - cpuAtStart;
  const [{ wal }] = await base.rows<{ wal: string }>('SELECT pg_current_wal_lsn() - $1::pg_lsn AS wal', [walAtStart]);
  console.log(
    JSON.stringify({
      prepared: PREPARED,
      batch: BATCH,
      jobs: done,
      wallS: (Date.now() - t0) / 1000,
      ids: process.env.DB_PATH_IDS === 'v4' ? 'v4' : 'v7',
      backendCpuMsPerJob: Number(((cpu * 1000) / done).toFixed(3)),
      walBytesPerJob: Math.round(Number(wal) / done),
      byStepMsPerJob: Object.fromEntries(
        Object.entries(steps)
          .filter(([k]) => k)
          .map(([k, v]) => [k, Number(((v * 1000) / done).toFixed(3))]),
      ),
    }),
  );
  await ds.destroy();
}

/** What a relay does with the rows (sent nowhere here): OutboxRelay's claim and delete, and its vacuum. */
async function claimOutbox(sql: Sql): Promise<void> {
  const rows = await claimOutboxRows(sql, 500);
  await deleteClaimedOutboxRows(sql, rows);
  if (vacuums.due(rows.length)) await vacuumOutbox(sql);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

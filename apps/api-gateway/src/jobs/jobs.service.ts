import { Inject, Injectable } from '@nestjs/common';
import { Histogram } from 'prom-client';
import { DataSource } from 'typeorm';
import { CreateJobDto, DEFAULT_RESOURCES, DependencyDto, KillCommand, TOPICS, JOB_ID_PATTERN, NO_IMAGE } from '@gantry/contracts';
import { ARRAY_COPIED_BYTES_MAX, ArrayChildCounts, admitDependencies, assertTransition, decideCancel, isTerminal, resolveRetryPolicy } from '@gantry/domain';
import { TraceHeaders, WakeUpSender } from '@gantry/messaging';
import {
  JobCreation,
  JobCreationOutcome,
  JobEventRecord,
  JobListFilter,
  JobRecord,
  MicroBatcher,
  appendJobEvents,
  autocommit,
  cancelArrayChildren,
  casUpdateJob,
  countArrayChildren,
  createJobs,
  enqueueOutbox,
  insertArrayChildren,
  newJobId,
  sortedChildIds,
  findJob,
  inTransaction,
  insertJobDependencies,
  keyOf,
  listJobDependencies,
  listJobEvents,
  listJobsPage,
  loadRanks,
  lockUpstreamJobs,
} from '@gantry/persistence';
import { ApiError, ErrorCode } from '@gantry/platform';
import type { Logger } from '@gantry/platform';
import { CONFIG, SCHEDULER_WAKE, SERVICE_LOGGER } from '@gantry/runtime';
import { AuditLog } from '../audit/audit-log';
import { Principal } from '../auth/principal';
import { GatewayEnv } from '../config';
import { ArraySummariser } from './array-summariser';

export interface CreateResult {
  job: JobRecord;
  /** true when an earlier request with the same Idempotency-Key created the job. */
  replayed: boolean;
}

export interface CancelResult {
  job: JobRecord;
  /** false when the job was already terminal: 200 unchanged instead of 202. */
  accepted: boolean;
}

/** How well creates group-commit: each batch's size (GANTRY_CREATE_BATCH_MAX, GANTRY_CREATE_CONCURRENCY). */
const createBatchSize = new Histogram({
  name: 'gantry_create_batch_size',
  help: 'Creates committed together in one statement',
  buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
});

/** A create's outcome, or the error its transaction failed with when it was retried alone. */
type CreateOutcome = JobCreationOutcome | { kind: 'failed'; error: unknown } | { kind: 'dependency-refused'; index: number; message: string };

@Injectable()
export class JobsService {
  private readonly creations: MicroBatcher<JobCreation, CreateOutcome>;

  constructor(
    @Inject(DataSource) private readonly ds: DataSource,
    @Inject(CONFIG) private readonly config: GatewayEnv,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
    @Inject(SCHEDULER_WAKE) private readonly schedulerWake: WakeUpSender,
    private readonly audit: AuditLog,
    private readonly arrays: ArraySummariser,
  ) {
    // Admission control: creates that cannot start within GANTRY_ADMISSION_WAIT_MS are refused
    // (OverloadedError, a 503 with Retry-After: see translateUnavailable), never queued without bound.
    this.creations = new MicroBatcher({
      maxBatch: config.GANTRY_CREATE_BATCH_MAX,
      maxInFlight: config.GANTRY_CREATE_CONCURRENCY,
      maxWaitMs: config.GANTRY_ADMISSION_WAIT_MS,
      shedNewAfterMs: config.GANTRY_SHED_CREATE_WAIT_MS > 0 ? config.GANTRY_SHED_CREATE_WAIT_MS : undefined,
      maxBacklog: config.GANTRY_ADMISSION_BACKLOG_MAX,
      run: (requests) => {
        createBatchSize.observe(requests.length);
        return this.createBatch(requests);
      },
    });
  }

  /**
   * The job row, its CREATED event and its idempotency key in one statement, then a wake-up for the
   * scheduler; concurrent creates share the statement (group commit, see MicroBatcher).
   * (owner, key) is claimed through the database's primary key, so racing retries produce one job
   * and every response names it.
   */
  async create(dto: CreateJobDto, who: Principal, idem: { key: string; bodySha256: string } | null, trace: TraceHeaders): Promise<CreateResult> {
    const now = new Date();
    const resources = { ...DEFAULT_RESOURCES, ...dto.resources };
    const queue = dto.queue ?? 'default';
    const id = newJobId();
    const retry = resolveRetryPolicy(dto.maxRetries, dto.retryPolicy);
    if (!retry.ok) throw new ApiError(ErrorCode.VALIDATION_FAILED, retry.message, [{ field: retry.field, message: retry.message }]);
    if (dto.array) checkArray(dto);
    const creation: JobCreation = {
      job: {
        id,
        owner: who.owner,
        queue,
        name: dto.name,
        image: dto.image ?? NO_IMAGE,
        command: dto.command,
        env: dto.env ?? {},
        labels: dto.labels ?? {},
        gpus: resources.gpus,
        gpuModel: resources.gpuModel ?? null,
        cpuCores: resources.cpuCores,
        memoryMiB: resources.memoryMiB,
        nodes: dto.nodes ?? 1,
        maxRetries: retry.policy.maxRetries,
        traceParent: trace.traceparent ?? null,
        createdAt: now,
        maxRuntimeSeconds: dto.maxRuntimeSeconds ?? null,
        backoffSeconds: retry.policy.backoffSeconds,
        maxBackoffSeconds: retry.policy.maxBackoffSeconds,
        retryOnExitCodes: [...retry.policy.retryOnExitCodes],
        arraySize: dto.array?.size ?? null,
        arrayParallelism: dto.array?.parallelism ?? null,
      },
      idempotency: idem,
      anyQueue: who.role === 'operator',
    };
    // Jobs with dependencies lock what they name, so they are created alone, not in the shared batch.
    // So are arrays: the parent and its children are written in one transaction of their own.
    const outcome = dto.array
      ? await this.createArray(creation)
      : dto.dependsOn?.length
        ? await this.createWithDependencies(creation, dto.dependsOn, who)
        : await this.creations.submit(creation);
    switch (outcome.kind) {
      case 'created':
        return { job: outcome.job, replayed: false };
      case 'replayed':
        return { job: outcome.job, replayed: true };
      case 'key-mismatch':
        throw new ApiError(ErrorCode.UNPROCESSABLE, 'Idempotency-Key was already used with a different request body', [
          { field: 'Idempotency-Key', message: 'reused with a different body' },
        ]);
      case 'unknown-queue':
        throw new ApiError(ErrorCode.UNPROCESSABLE, `queue ${queue} does not exist`, [{ field: 'queue', message: 'unknown queue' }]);
      case 'queue-forbidden':
        throw new ApiError(ErrorCode.FORBIDDEN, `queue ${queue} does not take jobs of owner ${who.owner}`, [
          { field: 'queue', message: 'not among the allowed owners' },
        ]);
      case 'dependency-refused':
        throw new ApiError(ErrorCode.UNPROCESSABLE, outcome.message, [{ field: `dependsOn[${outcome.index}].jobId`, message: outcome.message }]);
      case 'failed':
        throw outcome.error;
    }
  }

  /**
   * A job that waits for others (ADR 0023), in one transaction: the jobs it names are locked (none
   * can end meanwhile), admitDependencies decides whether it may be created and how many
   * dependencies it waits for, and the job and its dependency rows are written together. From then
   * on the end-of-job trigger moves it on.
   */
  private async createWithDependencies(creation: JobCreation, deps: DependencyDto[], who: Principal): Promise<CreateOutcome> {
    const outcome = await inTransaction(this.ds, async (sql): Promise<CreateOutcome> => {
      const upstream = await lockUpstreamJobs(sql, [...new Set(deps.map((d) => d.jobId.toLowerCase()))]);
      const admission = admitDependencies(deps, new Map(upstream.map((j) => [j.id, j])), { owner: who.owner, operator: who.role === 'operator' });
      if (!admission.ok) return { kind: 'dependency-refused', index: admission.index, message: admission.message };
      const [created] = await createJobs(
        sql,
        [{ ...creation, job: { ...creation.job, depsPending: admission.pending } }],
        new Date(),
        this.config.GANTRY_IDEMPOTENCY_TTL_MS,
      );
      if (created.kind === 'created') {
        await insertJobDependencies(
          sql,
          deps.map((d) => ({ jobId: created.job.id, dependsOn: d.jobId.toLowerCase(), condition: d.condition })),
        );
      }
      return created;
    });
    if (outcome.kind === 'created') this.schedulerWake.signal('JOB_CREATED');
    return outcome;
  }

  /**
   * An array (ADR 0025) in one transaction: the parent through createJobs (its Idempotency-Key
   * claimed as for any job, so a replay returns the parent and creates nothing), then its children
   * from the parent row in one statement (insertArrayChildren, their ids sorted so index order is list order). A crash before the commit leaves
   * neither; the scheduler never sees a parent without its children.
   */
  private async createArray(creation: JobCreation): Promise<CreateOutcome> {
    const outcome = await inTransaction(this.ds, async (sql): Promise<CreateOutcome> => {
      const [created] = await createJobs(sql, [creation], new Date(), this.config.GANTRY_IDEMPOTENCY_TTL_MS);
      if (created.kind === 'created') await insertArrayChildren(sql, created.job.id, sortedChildIds(created.job.arraySize!));
      return created;
    });
    if (outcome.kind === 'created') this.schedulerWake.signal('JOB_CREATED');
    return outcome;
  }

  /**
   * One batch of creates. Requests sharing an (owner, key) pair cannot go in one statement: the
   * first goes now and the others are answered from its outcome (or retried after it). If the
   * batch's transaction fails (a deadlock with another replica's batch, a queue deleted meanwhile),
   * each request is retried alone so that one cannot fail the others.
   */
  private async createBatch(requests: JobCreation[]): Promise<CreateOutcome[]> {
    const firstWithKey = new Map<string, number>();
    const followers: number[] = [];
    requests.forEach((r, i) => {
      if (!r.idempotency) return;
      const k = keyOf(r.job.owner, r.idempotency.key);
      if (firstWithKey.has(k)) followers.push(i);
      else firstWithKey.set(k, i);
    });
    const leaders = requests.map((_, i) => i).filter((i) => !followers.includes(i));
    const outcomes: CreateOutcome[] = new Array(requests.length);
    const led = await this.createTogether(leaders.map((i) => requests[i]));
    leaders.forEach((i, n) => (outcomes[i] = led[n]));

    const retry: number[] = [];
    for (const i of followers) {
      const r = requests[i];
      const leader = firstWithKey.get(keyOf(r.job.owner, r.idempotency!.key))!;
      const lo = outcomes[leader];
      if (lo.kind === 'created' || lo.kind === 'replayed') {
        outcomes[i] = requests[leader].idempotency!.bodySha256 === r.idempotency!.bodySha256 ? { kind: 'replayed', job: lo.job } : { kind: 'key-mismatch' };
      } else {
        retry.push(i);
      }
    }
    if (retry.length > 0) {
      const again = await this.createBatch(retry.map((i) => requests[i]));
      retry.forEach((i, n) => (outcomes[i] = again[n]));
    }
    return outcomes;
  }

  private async createTogether(requests: JobCreation[]): Promise<CreateOutcome[]> {
    const ttl = this.config.GANTRY_IDEMPOTENCY_TTL_MS;
    const create = async (batch: JobCreation[]) => {
      const outcomes = await createJobs(autocommit(this.ds), batch, new Date(), ttl);
      if (outcomes.some((o) => o.kind === 'created')) this.schedulerWake.signal('JOB_CREATED');
      return outcomes;
    };
    try {
      return await create(requests);
    } catch (e) {
      if (requests.length === 1) throw e;
      this.logger.warn({ err: e, batch: requests.length }, 'batched create failed; retrying its requests one by one');
      const settled = await Promise.allSettled(requests.map((r) => create([r])));
      return settled.map((s): CreateOutcome => (s.status === 'fulfilled' ? s.value[0] : { kind: 'failed', error: s.reason }));
    }
  }

  /** One page of the caller's (or, for operators, anyone's) jobs; see ListJobsQuery. */
  async list(filter: JobListFilter, after: { createdAt: Date; id: string } | null, limit: number): Promise<JobRecord[]> {
    return listJobsPage(autocommit(this.ds), filter, after, limit);
  }

  /** Each array parent's children by state (ADR 0025). */
  async arrayChildCounts(parentIds: string[]): Promise<Map<string, ArrayChildCounts>> {
    return parentIds.length === 0 ? new Map() : countArrayChildren(autocommit(this.ds), parentIds);
  }

  /** What each job depends on (the job resource's `dependsOn`), in one read for a page. */
  async dependenciesOf(jobs: readonly JobRecord[]): Promise<Map<string, Array<{ jobId: string; condition: 'succeeded' | 'finished' }>>> {
    return listJobDependencies(
      autocommit(this.ds),
      jobs.map((j) => j.id),
    );
  }

  /** A job the caller may see, else 404 (others' jobs are invisible, not forbidden). */
  async get(id: string, who: Principal): Promise<JobRecord> {
    const job = JOB_ID_PATTERN.test(id) ? await findJob(autocommit(this.ds), id) : null;
    if (!job || (who.role !== 'operator' && job.owner !== who.owner)) {
      throw new ApiError(ErrorCode.NOT_FOUND, `job ${id} not found`);
    }
    return job;
  }

  async events(id: string, who: Principal, afterSeq: number, limit: number): Promise<JobEventRecord[]> {
    await this.get(id, who);
    return listJobEvents(autocommit(this.ds), id, afterSeq, limit);
  }

  /**
   * Cancellation is intent: a queued job ends at once; a dispatched one gets a KILL per live rank
   * and ends when its agent reports CANCELLED. Retried on a lost compare-and-set.
   */
  async cancel(id: string, who: Principal, trace: TraceHeaders): Promise<CancelResult> {
    const job = await this.get(id, who);
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        const result = await inTransaction(this.ds, (sql) => this.cancelOnce(sql, id, trace));
        // An operator's cancel of someone else's job is an operator's change (contract §4.3).
        if (job.owner !== who.owner) await this.audit.record(who, 'jobs.cancel', id, { owner: job.owner, accepted: result.accepted });
        return result;
      } catch (e) {
        if ((e as Error).name !== 'ConcurrentUpdateError') throw e;
      }
    }
    throw new ApiError(ErrorCode.CONFLICT, `job ${id} is changing too fast to cancel; retry`);
  }

  private async cancelOnce(sql: Parameters<Parameters<typeof inTransaction>[1]>[0], id: string, trace: TraceHeaders): Promise<CancelResult> {
    const job = (await findJob(sql, id))!;
    const now = new Date();
    if (job.arraySize !== null) return this.cancelArray(sql, job, now, trace);
    const decision = decideCancel(job.state, job.cancelRequested);
    switch (decision.kind) {
      case 'already-terminal':
        return { job, accepted: false };
      case 'already-requested':
        return { job, accepted: true };
      case 'cancel-now': {
        assertTransition(job.state, 'CANCELLED');
        const { firstSeq } = await casUpdateJob(
          sql,
          id,
          job.version,
          { cancelRequested: true, state: 'CANCELLED', finishedAt: now, pendingReason: null, reason: 'CANCELLED_BY_USER' },
          2,
          now,
        );
        await appendJobEvents(sql, id, firstSeq, [
          { type: 'CANCEL_REQUESTED', at: now },
          { type: 'STATE_CHANGED', at: now, fromState: 'QUEUED', toState: 'CANCELLED', attempt: job.attempt, reason: 'CANCELLED_BY_USER' },
        ]);
        return { job: (await findJob(sql, id))!, accepted: true };
      }
      case 'request-kill': {
        const { firstSeq } = await casUpdateJob(sql, id, job.version, { cancelRequested: true }, 1, now);
        await appendJobEvents(sql, id, firstSeq, [{ type: 'CANCEL_REQUESTED', at: now, attempt: job.attempt }]);
        const live = (await loadRanks(sql, id, job.attempt)).filter((r) => !r.released);
        const kills: KillCommand[] = live.map((r) => ({
          type: 'KILL',
          nodeId: r.nodeId,
          jobId: id,
          attempt: job.attempt,
          issuedAt: now.getTime(),
          reason: 'CANCELLED_BY_USER',
        }));
        await enqueueOutbox(
          sql,
          kills.map((k) => ({ topic: TOPICS.agentCommands, key: k.nodeId, value: k, headers: trace })),
        );
        return { job: (await findJob(sql, id))!, accepted: true };
      }
    }
  }

  /**
   * An array's parent (ADR 0025): the intent is recorded on the parent, every child not ended is
   * cancelled as its own cancel would (queued ones end now, placed ones get KILLs), and the parent
   * is summarised at once, so an array none of whose children was placed answers CANCELLED.
   */
  private async cancelArray(sql: Parameters<Parameters<typeof inTransaction>[1]>[0], parent: JobRecord, now: Date, trace: TraceHeaders): Promise<CancelResult> {
    if (isTerminal(parent.state)) return { job: parent, accepted: false };
    if (!parent.cancelRequested) {
      const { firstSeq } = await casUpdateJob(sql, parent.id, parent.version, { cancelRequested: true }, 1, now);
      await appendJobEvents(sql, parent.id, firstSeq, [{ type: 'CANCEL_REQUESTED', at: now }]);
    }
    const { kills } = await cancelArrayChildren(sql, parent.id, now);
    const commands: KillCommand[] = kills.map((k) => ({
      type: 'KILL',
      nodeId: k.nodeId,
      jobId: k.jobId,
      attempt: k.attempt,
      issuedAt: now.getTime(),
      reason: 'CANCELLED_BY_USER',
    }));
    // Bounded statements: enqueueOutbox binds a few parameters per row, and Postgres allows 65,535.
    for (let i = 0; i < commands.length; i += KILLS_PER_STATEMENT) {
      await enqueueOutbox(
        sql,
        commands.slice(i, i + KILLS_PER_STATEMENT).map((k) => ({ topic: TOPICS.agentCommands, key: k.nodeId, value: k, headers: trace })),
      );
    }
    await this.arrays.summarise(sql, [(await findJob(sql, parent.id))!], now);
    return { job: (await findJob(sql, parent.id))!, accepted: true };
  }
}

const KILLS_PER_STATEMENT = 1000;

/** An array's own limits (400): not with dependsOn, parallelism within size, and bounded copies. */
function checkArray(dto: CreateJobDto): void {
  const array = dto.array!;
  const refuse = (field: string, message: string) => {
    throw new ApiError(ErrorCode.VALIDATION_FAILED, message, [{ field, message }]);
  };
  if (dto.dependsOn?.length) refuse('array', 'an array cannot have dependsOn');
  if (array.parallelism !== undefined && array.parallelism > array.size) refuse('array.parallelism', 'parallelism must not exceed size');
  const perChild = Buffer.byteLength(JSON.stringify([dto.command, dto.env ?? {}, dto.labels ?? {}]));
  if (array.size * perChild > ARRAY_COPIED_BYTES_MAX) {
    refuse('array.size', `size x (command + env + labels) is ${array.size * perChild} bytes; at most ${ARRAY_COPIED_BYTES_MAX}`);
  }
}

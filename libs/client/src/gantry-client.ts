import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './generated/gantry-api';
import type {
  ClusterHeatmap,
  ClusterSummary,
  CreateJob,
  CreateQueue,
  Job,
  JobEvent,
  JobExplanation,
  JobLogsQuery,
  JobPage,
  JobState,
  JobStreamEvent,
  JobStreamEventPage,
  InventoryPatch,
  Node,
  NodeEvent,
  NodePage,
  Problem,
  Queue,
  TokenCreated,
  UpdateQueue,
  UsageQuery,
  UsageRow,
  Whoami,
} from './api-types';
import { DEFAULT_RETRY_POLICY, RetryBudget, RetryPolicy, backoffDelay, isRetryable } from './retry-policy';
import { readSse } from './sse-reader';

export interface ClientOptions {
  baseUrl: string;
  token: string;
  retry?: RetryPolicy;
  budget?: RetryBudget;
  /** Per-attempt timeout, ms (not applied to a stream once it is open). */
  timeoutMs?: number;
  /** Injected for tests; defaults to real time and Math.random. */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

/** A raw answer (`request`), for callers that look at statuses and headers themselves. */
export interface ApiResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
}

/** An answer the server gave that is final (4xx other than 429), with its problem details. */
export class GantryApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Partial<Problem>,
  ) {
    super(`${status} ${problem.title ?? ''}: ${problem.detail ?? ''}`.trim());
    this.name = 'GantryApiError';
  }
}

/** The body of POST /v1/jobs. */
export type JobSpec = CreateJob;

export interface ListJobsQuery {
  queue?: string;
  state?: JobState;
  owner?: string;
  limit?: number;
  cursor?: string;
}

export interface ListNodesQuery {
  health?: Node['health'];
  gpuModel?: string;
  zone?: string;
  limit?: number;
  cursor?: string;
}

export interface FollowOptions {
  /** Resume after this event (the SSE id of the last one received). */
  lastEventId?: string;
  /** Stops following. */
  signal?: AbortSignal;
  /**
   * Called each time the stream is open (the server answered 200, before its events are read): a
   * caller that lists the current state after this cannot miss a change made in between.
   */
  onOpen?: () => void;
}

/**
 * Gantry's REST API for TypeScript callers (the CLI, tests, integrations), typed from
 * docs/openapi.json (openapi-typescript) and called through openapi-fetch. Every call retries
 * network errors, 429 and 5xx with exponential backoff and full jitter under a retry budget;
 * a create carries one Idempotency-Key for all of its attempts, so a retried create never starts a
 * second job. Streams reconnect with Last-Event-ID, so a dropped connection loses nothing.
 */
export class GantryClient {
  private readonly policy: RetryPolicy;
  private readonly budget: RetryBudget;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;
  /** The generated, typed client; every call goes through the retry policy. */
  readonly api: Client<paths>;

  constructor(private readonly opts: ClientOptions) {
    this.policy = opts.retry ?? DEFAULT_RETRY_POLICY;
    this.budget = opts.budget ?? new RetryBudget();
    this.sleep = opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    this.random = opts.random ?? Math.random;
    this.api = createClient<paths>({
      baseUrl: opts.baseUrl,
      headers: { authorization: `Bearer ${opts.token}` },
      fetch: (req) => this.send(req, true),
    });
  }

  /**
   * Sends a request under the retry policy (the body is replayed from a clone on each attempt);
   * returns the final answer, or throws the last network error.
   */
  private async send(req: Request, withTimeout: boolean): Promise<Response> {
    this.budget.onRequest();
    for (let retry = 0; ; retry++) {
      let res: Response | null = null;
      let error: Error | null = null;
      try {
        res = await fetch(req.clone(), withTimeout ? { signal: anySignal(req.signal, AbortSignal.timeout(this.opts.timeoutMs ?? 10_000)) } : {});
      } catch (e) {
        if (req.signal?.aborted) throw e;
        error = e as Error;
      }
      const canRetry = isRetryable(res ? { status: res.status } : { networkError: true });
      if (!canRetry || retry >= this.policy.maxRetries || !this.budget.trySpend()) {
        if (error) throw error;
        return res!;
      }
      const retryAfter = res ? Number(res.headers.get('retry-after')) * 1000 || null : null;
      await res?.body?.cancel().catch(() => undefined);
      await this.sleep(backoffDelay(retry, this.policy, this.random(), retryAfter));
    }
  }

  /**
   * Any route, raw, under the retry policy: for routes this version of the document does not have
   * yet, and for tests that look at statuses. The body is parsed as JSON when it is JSON.
   */
  async request<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse<T>> {
    const res = await this.send(
      new Request(`${this.opts.baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${this.opts.token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
      true,
    );
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON; leave the text
    }
    return { status: res.status, headers: res.headers, body: parsed as T };
  }

  /** Creates a job; the key is generated once here and reused by every retry of this call. */
  async createJob(spec: JobSpec, idempotencyKey: string = globalThis.crypto.randomUUID()): Promise<{ job: Job; replayed: boolean }> {
    const r = await this.api.POST('/v1/jobs', { body: spec, params: { header: { 'Idempotency-Key': idempotencyKey } } });
    return { job: ok(r), replayed: r.response.headers.get('idempotent-replayed') === 'true' };
  }

  async getJob(id: string): Promise<Job> {
    return ok(await this.api.GET('/v1/jobs/{id}', { params: { path: { id } } }));
  }

  /** Why a QUEUED job waits: every blocker, single changes that would let it start, an estimated start (409 in any other state). */
  async explainJob(id: string): Promise<JobExplanation> {
    return ok(await this.api.GET('/v1/jobs/{id}/explain', { params: { path: { id } } }));
  }

  async cancelJob(id: string): Promise<Job> {
    return ok(await this.api.POST('/v1/jobs/{id}/cancel', { params: { path: { id } } }));
  }

  async listJobs(query: ListJobsQuery = {}): Promise<JobPage> {
    return ok(await this.api.GET('/v1/jobs', { params: { query } }));
  }

  /** Every page of a listing, following nextCursor. */
  async *listAllJobs(query: Omit<ListJobsQuery, 'cursor'> = {}): AsyncGenerator<Job> {
    let cursor: string | undefined;
    do {
      const page = await this.listJobs({ ...query, cursor });
      yield* page.items;
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  }

  /** Every event of a job so far, oldest first. */
  async jobEvents(id: string): Promise<JobEvent[]> {
    const all: JobEvent[] = [];
    let cursor: string | undefined;
    do {
      const page = ok(await this.api.GET('/v1/jobs/{id}/events', { params: { path: { id }, query: { cursor, limit: 500 } } })) as {
        items: JobEvent[];
        nextCursor: string | null;
      };
      all.push(...page.items);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    return all;
  }

  /**
   * A job's events as they happen (SSE), from the first (or after `lastEventId`), until its
   * terminal event. A dropped connection is reopened with Last-Event-ID: nothing is missed or repeated.
   */
  followJobEvents(id: string, opts: FollowOptions = {}): AsyncGenerator<JobStreamEvent> {
    return this.follow(`/v1/jobs/${encodeURIComponent(id)}/events?follow=true`, opts);
  }

  /** The events of every job the caller may see (one queue's, with `queue`), from now or after `lastEventId`; until aborted. */
  followEvents(opts: FollowOptions & { queue?: string } = {}): AsyncGenerator<JobStreamEvent> {
    const qs = new URLSearchParams({ follow: 'true', ...(opts.queue ? { queue: opts.queue } : {}) });
    return this.follow(`/v1/events?${qs}`, opts);
  }

  /** One page of every visible job's events in stream order (from the beginning, or after `after`). */
  async eventsPage(query: { queue?: string; after?: string; limit?: number } = {}): Promise<JobStreamEventPage> {
    return ok(await this.api.GET('/v1/events', { params: { query } })) as JobStreamEventPage;
  }

  private async *follow(path: string, opts: FollowOptions): AsyncGenerator<JobStreamEvent> {
    let lastEventId = opts.lastEventId;
    for (let failures = 0; ;) {
      const headers: Record<string, string> = { authorization: `Bearer ${this.opts.token}`, accept: 'text/event-stream' };
      if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
      let res: Response;
      try {
        res = await this.send(new Request(`${this.opts.baseUrl}${path}`, { headers, signal: opts.signal }), false);
      } catch (e) {
        if (opts.signal?.aborted) return;
        throw e;
      }
      if (!res.ok) throw new GantryApiError(res.status, (await res.json().catch(() => ({}))) as Partial<Problem>);
      opts.onOpen?.();
      try {
        for await (const m of readSse(res.body!)) {
          failures = 0;
          if (m.id !== undefined) lastEventId = m.id;
          yield JSON.parse(m.data) as JobStreamEvent;
        }
        return; // the server ended the stream: the job reached its end
      } catch (e) {
        // The connection dropped mid-stream: reopen it where we were.
        if (opts.signal?.aborted) return;
        if (++failures > this.policy.maxRetries) throw e;
        await this.sleep(backoffDelay(failures - 1, this.policy, this.random()));
      }
    }
  }

  /**
   * A job's log (one rank of one attempt, text/plain, contract §4.4) as it arrives: the whole log
   * as the node keeps it, or with `follow: 'true'` until the attempt ends.
   */
  jobLogs(id: string, query: JobLogsQuery = {}, signal?: AbortSignal): AsyncGenerator<string> {
    const qs = new URLSearchParams(
      Object.entries(query)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]): [string, string] => [k, String(v)]),
    );
    return this.rawStream(`/v1/jobs/${encodeURIComponent(id)}/logs${qs.size ? `?${qs}` : ''}`, 'text/plain', signal);
  }

  /**
   * A streamed body as text, for routes that answer with text (job logs, contract §4.4). Opening
   * the stream is retried as any call; once it is open, the chunks come as they arrive.
   */
  async *rawStream(path: string, accept: string, signal?: AbortSignal): AsyncGenerator<string> {
    const res = await this.send(new Request(`${this.opts.baseUrl}${path}`, { headers: { authorization: `Bearer ${this.opts.token}`, accept }, signal }), false);
    if (!res.ok) throw new GantryApiError(res.status, (await res.json().catch(() => ({}))) as Partial<Problem>);
    const decoder = new TextDecoder();
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) yield decoder.decode(chunk, { stream: true });
  }

  async listNodes(query: ListNodesQuery = {}): Promise<NodePage> {
    return ok(await this.api.GET('/v1/nodes', { params: { query } }));
  }

  async getNode(id: string): Promise<Node> {
    return ok(await this.api.GET('/v1/nodes/{id}', { params: { path: { id } } }));
  }

  async cordonNode(id: string): Promise<Node> {
    return ok(await this.api.POST('/v1/nodes/{id}/cordon', { params: { path: { id } } }));
  }

  /** Cordons the node now; after the grace what still runs there is requeued (NODE_DRAINED, no retry used). Operators. */
  async drainNode(id: string, gracePeriodSeconds: number): Promise<Node> {
    return ok(await this.api.POST('/v1/nodes/{id}/drain', { params: { path: { id } }, body: { gracePeriodSeconds } }));
  }

  async uncordonNode(id: string): Promise<Node> {
    return ok(await this.api.POST('/v1/nodes/{id}/uncordon', { params: { path: { id } } }));
  }

  /** Changes the node's pinned inventory: the fields given replace the pinned ones (ADR 0035). Operators. */
  async updateNodeInventory(id: string, declared: InventoryPatch): Promise<Node> {
    return ok(await this.api.PATCH('/v1/nodes/{id}', { params: { path: { id } }, body: { declared } }));
  }

  /** Every event of a node (health changes, evictions, cordons), oldest first. */
  async nodeEvents(id: string): Promise<NodeEvent[]> {
    const all: NodeEvent[] = [];
    let cursor: string | undefined;
    do {
      const page = ok(await this.api.GET('/v1/nodes/{id}/events', { params: { path: { id }, query: { limit: 500, cursor } } }));
      all.push(...page.items);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    return all;
  }

  async clusterSummary(): Promise<ClusterSummary> {
    return ok(await this.api.GET('/v1/cluster/summary'));
  }

  /** Every node in one columnar answer (health, GPUs, utilisation by zone and rack), for drawing the fleet. */
  async clusterHeatmap(): Promise<ClusterHeatmap> {
    return ok(await this.api.GET('/v1/cluster/heatmap'));
  }

  /** The owner and role of this client's token. */
  async whoami(): Promise<Whoami> {
    return ok(await this.api.GET('/v1/whoami'));
  }

  async createToken(owner: string, role: 'user' | 'operator'): Promise<TokenCreated> {
    return ok(await this.api.POST('/v1/tokens', { body: { owner, role } }));
  }

  async createQueue(
    name: string,
    priority: number,
    quotaGpus: number | null = null,
    more: Omit<CreateQueue, 'name' | 'priority' | 'quota'> = {},
  ): Promise<Queue> {
    return ok(await this.api.POST('/v1/queues', { body: { name, priority, quota: { gpus: quotaGpus }, ...more } }));
  }

  async listQueues(): Promise<Queue[]> {
    return ok(await this.api.GET('/v1/queues')).items;
  }

  async getQueue(name: string): Promise<Queue> {
    return ok(await this.api.GET('/v1/queues/{name}', { params: { path: { name } } }));
  }

  async updateQueue(name: string, changes: UpdateQueue): Promise<Queue> {
    return ok(await this.api.PATCH('/v1/queues/{name}', { params: { path: { name } }, body: changes }));
  }

  /** Usage per bucket and group (contract 5.4): the caller's own, or everyone's for an operator. */
  async usage(query: UsageQuery): Promise<UsageRow[]> {
    const body = ok(await this.api.GET('/v1/usage', { params: { query }, headers: { accept: 'application/json' } }));
    // The operation also offers text/csv; asked for JSON, a string would be the gateway's mistake.
    if (typeof body === 'string') throw new Error('GET /v1/usage answered text where JSON was asked for');
    return body.items;
  }
}

/** The data of a success, or the problem of a failure as a GantryApiError. */
function ok<T>(r: { data?: T; error?: unknown; response: Response }): T {
  if (r.error !== undefined || r.data === undefined) throw new GantryApiError(r.response.status, (r.error ?? {}) as Partial<Problem>);
  return r.data;
}

function anySignal(...signals: Array<AbortSignal | null | undefined>): AbortSignal {
  return AbortSignal.any(signals.filter((s): s is AbortSignal => !!s));
}

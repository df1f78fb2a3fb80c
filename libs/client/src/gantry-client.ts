import { randomUUID } from 'node:crypto';
import { DEFAULT_RETRY_POLICY, RetryBudget, RetryPolicy, backoffDelay, isRetryable } from './retry-policy';

export interface ClientOptions {
  baseUrl: string;
  token: string;
  retry?: RetryPolicy;
  budget?: RetryBudget;
  /** Per-attempt timeout, ms. */
  timeoutMs?: number;
  /** Injected for tests; defaults to real time and Math.random. */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** An answer the server gave that is final (4xx other than 429), with its problem details. */
export class GantryApiError extends Error {
  constructor(readonly status: number, readonly problem: { type?: string; title?: string; detail?: string; errors?: Array<{ field: string; message: string }> }) {
    super(`${status} ${problem.title ?? ''}: ${problem.detail ?? ''}`.trim());
    this.name = 'GantryApiError';
  }
}

export interface JobSpec {
  name: string;
  image: string;
  command: string[];
  queue?: string;
  env?: Record<string, string>;
  labels?: Record<string, string>;
  resources?: { gpus: number; gpuModel?: string | null; cpuCores: number; memoryMiB: number };
  nodes?: number;
  maxRetries?: number;
}

/**
 * Gantry's REST API for TypeScript callers (tests today, the CLI later). Retries network errors,
 * 429 and 5xx with exponential backoff and full jitter under a retry budget; a create carries one
 * Idempotency-Key for all of its attempts, so a retried create never starts a second job.
 */
export class GantryClient {
  private readonly policy: RetryPolicy;
  private readonly budget: RetryBudget;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;

  constructor(private readonly opts: ClientOptions) {
    this.policy = opts.retry ?? DEFAULT_RETRY_POLICY;
    this.budget = opts.budget ?? new RetryBudget();
    this.sleep = opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    this.random = opts.random ?? Math.random;
  }

  /** Raw call with the retry policy; returns whatever final answer came back. */
  async request<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse<T>> {
    this.budget.onRequest();
    for (let retry = 0; ; retry++) {
      let outcome: ApiResponse<T> | { networkError: true; error: Error };
      try {
        outcome = await this.once<T>(method, path, body, headers);
      } catch (error) {
        outcome = { networkError: true, error: error as Error };
      }
      const canRetry = isRetryable('networkError' in outcome ? { networkError: true } : outcome);
      if (!canRetry || retry >= this.policy.maxRetries || !this.budget.trySpend()) {
        if ('networkError' in outcome) throw outcome.error;
        return outcome;
      }
      const retryAfter = 'headers' in outcome ? Number(outcome.headers.get('retry-after')) * 1000 || null : null;
      await this.sleep(backoffDelay(retry, this.policy, this.random(), retryAfter));
    }
  }

  private async once<T>(method: string, path: string, body: unknown, headers: Record<string, string>): Promise<ApiResponse<T>> {
    const res = await fetch(`${this.opts.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.opts.token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(this.opts.timeoutMs ?? 10_000),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON; leave the text
    }
    return { status: res.status, headers: res.headers, body: parsed as T };
  }

  private async expectOk<T>(res: ApiResponse<T>): Promise<T> {
    if (res.status >= 400) throw new GantryApiError(res.status, (res.body ?? {}) as object);
    return res.body;
  }

  /** Creates a job; the key is generated once here and reused by every retry of this call. */
  async createJob(spec: JobSpec, idempotencyKey: string = randomUUID()): Promise<{ job: any; replayed: boolean }> {
    const res = await this.request('POST', '/v1/jobs', spec, { 'idempotency-key': idempotencyKey });
    const job = await this.expectOk(res);
    return { job, replayed: res.headers.get('idempotent-replayed') === 'true' };
  }

  async getJob(id: string): Promise<any> {
    return this.expectOk(await this.request('GET', `/v1/jobs/${encodeURIComponent(id)}`));
  }

  async cancelJob(id: string): Promise<any> {
    return this.expectOk(await this.request('POST', `/v1/jobs/${encodeURIComponent(id)}/cancel`));
  }

  async listJobs(query: { queue?: string; state?: string; owner?: string; limit?: number; cursor?: string } = {}): Promise<{ items: any[]; nextCursor: string | null }> {
    const qs = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== undefined).map(([k, v]) => [k, String(v)] as [string, string]));
    return this.expectOk(await this.request('GET', `/v1/jobs${qs.size ? `?${qs}` : ''}`));
  }

  /** Every page of a listing, following nextCursor. */
  async *listAllJobs(query: { queue?: string; state?: string; owner?: string; limit?: number } = {}): AsyncGenerator<any> {
    let cursor: string | undefined;
    do {
      const page = await this.listJobs({ ...query, cursor });
      yield* page.items;
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  }

  async jobEvents(id: string): Promise<any[]> {
    const all: any[] = [];
    let cursor: string | undefined;
    do {
      const page: { items: any[]; nextCursor: string | null } = await this.expectOk(
        await this.request('GET', `/v1/jobs/${encodeURIComponent(id)}/events${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`),
      );
      all.push(...page.items);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    return all;
  }

  /** Every event of a node (health changes, evictions, cordons), oldest first. */
  async nodeEvents(id: string): Promise<any[]> {
    const all: any[] = [];
    let cursor: string | undefined;
    do {
      const page: { items: any[]; nextCursor: string | null } = await this.expectOk(
        await this.request('GET', `/v1/nodes/${encodeURIComponent(id)}/events?limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`),
      );
      all.push(...page.items);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    return all;
  }

  async getNode(id: string): Promise<any> {
    return this.expectOk(await this.request('GET', `/v1/nodes/${encodeURIComponent(id)}`));
  }

  async createToken(owner: string, role: 'user' | 'operator'): Promise<{ id: string; owner: string; role: string; token: string }> {
    return this.expectOk(await this.request('POST', '/v1/tokens', { owner, role }));
  }

  async createQueue(name: string, priority: number, quotaGpus: number | null = null): Promise<any> {
    return this.expectOk(await this.request('POST', '/v1/queues', { name, priority, quota: { gpus: quotaGpus } }));
  }
}

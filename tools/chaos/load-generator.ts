import { randomUUID } from 'node:crypto';
import { GantryApiError, GantryClient } from '@gantry/client';
import { CountingRetryBudget } from './counting-retry-budget';
import { nextJob } from './job-mix';

/** One create the load generator made, and what came of it. */
export interface SubmitRecord {
  key: string;
  nodes: number;
  startedAt: number;
  endedAt: number;
  /** accepted: 201; replayed: 200 with Idempotent-Replayed (a retry after a lost answer); rejected: a final 4xx; failed: no answer after retries. */
  outcome: 'accepted' | 'replayed' | 'rejected' | 'failed';
  /** Gateways tried after the first gave no answer (same Idempotency-Key). */
  failedOver?: number;
  jobId?: string;
  status?: number;
  error?: string;
}

export interface LoadOptions {
  /** Every gateway replica: creates go round-robin, and one that gets no answer from its gateway is tried on the next. */
  gatewayUrls: string[];
  token: string;
  ratePerS: number;
  maxInFlight: number;
  jobMinMs: number;
  jobMaxMs: number;
  maxRetries: number;
}

/**
 * Submits jobs through the gateways at a fixed rate with GantryClient (its own retries and retry
 * budget, one Idempotency-Key per create) and records every answer, so the end of the run can ask
 * the database about each job the gateway accepted. GantryClient talks to one base URL; with several
 * gateways a create that got no answer from one (refused connection, reset, 5xx after retries) is
 * sent to the next with the same key, as a client behind a list of endpoints or a load balancer would.
 */
export class LoadGenerator {
  readonly records: SubmitRecord[] = [];
  readonly budget = new CountingRetryBudget();
  /** Ticks where maxInFlight creates were already waiting, so a create was not sent (the client side backing off). */
  skipped = 0;
  private readonly clients: GantryClient[];
  private readonly inFlight = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private sent = 0;
  private t0 = 0;

  constructor(private readonly opts: LoadOptions) {
    this.clients = opts.gatewayUrls.map((baseUrl) => new GantryClient({ baseUrl, token: opts.token, budget: this.budget }));
  }

  start(): void {
    this.t0 = Date.now();
    // Every 50 ms, send what the rate owes since the start (no drift from timer lateness).
    this.timer = setInterval(() => {
      const owed = Math.floor(((Date.now() - this.t0) / 1000) * this.opts.ratePerS) - this.sent;
      for (let i = 0; i < owed; i++) {
        this.sent++;
        if (this.inFlight.size >= this.opts.maxInFlight) {
          this.skipped++;
          continue;
        }
        const p = this.submit(this.sent).finally(() => this.inFlight.delete(p));
        this.inFlight.add(p);
      }
    }, 50);
  }

  /** Stops sending and waits for the creates still waiting for an answer. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await Promise.all([...this.inFlight]);
  }

  private async submit(i: number): Promise<void> {
    const spec = nextJob(i, { minMs: this.opts.jobMinMs, maxMs: this.opts.jobMaxMs, maxRetries: this.opts.maxRetries });
    const key = `chaos-${randomUUID()}`;
    const startedAt = Date.now();
    const rec: SubmitRecord = { key, nodes: spec.nodes ?? 1, startedAt, endedAt: startedAt, outcome: 'failed' };
    for (let k = 0; k < this.clients.length; k++) {
      try {
        const { job, replayed } = await this.clients[(i + k) % this.clients.length].createJob(spec, key);
        rec.outcome = replayed ? 'replayed' : 'accepted';
        rec.jobId = String(job.id);
        rec.status = replayed ? 200 : 201;
        delete rec.error;
        break;
      } catch (e) {
        rec.outcome = 'failed';
        if (e instanceof GantryApiError) {
          rec.status = e.status;
          rec.outcome = e.status >= 500 || e.status === 429 ? 'failed' : 'rejected';
        }
        rec.error = (e as Error).message.slice(0, 200);
        // A final answer (4xx) is the same on every gateway; no answer may be this gateway's alone.
        if (rec.outcome === 'rejected') break;
        if (k + 1 < this.clients.length) rec.failedOver = k + 1;
      }
    }
    rec.endedAt = Date.now();
    this.records.push(rec);
  }
}

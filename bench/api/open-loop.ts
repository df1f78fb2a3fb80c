/**
 * An open-loop load generator: request i is due at start + i / rate whatever happened to the ones
 * before it, and its latency is counted from that due time, not from when a socket was free to send
 * it. A closed-loop generator (autocannon, wrk) waits for answers and so slows down exactly when the
 * server does, hiding the queue a real client population builds (coordinated omission); users meet
 * the open-loop figure.
 *
 * Requests go over node:http with keep-alive sockets, at most `maxSockets` at once; a request that
 * finds them all busy waits in the client and that wait counts too (it is what a client with that
 * many connections would see). Connection failures and timeouts are counted, never dropped.
 */
import { Agent, request } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { PhaseResult, Sample } from './load';

export interface OpenLoopTarget {
  baseUrl: string;
  token: string;
  /** Body of request i (its own job); the Idempotency-Key is fresh per request. */
  body: (i: number) => string;
  path?: string;
  /** Idempotency-Key of request i (default: a fresh UUID each), for a caller that must find each request's job later (test:chaos). */
  idempotencyKey?: (i: number) => string;
}

export interface OpenLoopOptions {
  /** Requests per second, evenly spaced. */
  rate: number;
  durationS: number;
  /** Sockets the client may hold open (default 512): its concurrency ceiling. */
  maxSockets?: number;
  /** A request with no answer after this is a timeout (default 10 s). */
  timeoutMs?: number;
}

/** One answered create: when it was due, when it was answered, and the job it created (2xx only). */
export interface OpenLoopSample extends Sample {
  /** Epoch ms the request was due. */
  dueAtMs: number;
  jobId: string | null;
  /** The request's number in the phase (0-based). */
  index: number;
  /**
   * From its due time until the client had a socket for it, ms: the part of the latency spent in
   * the client, waiting for one of its `maxSockets` to come free (plus the generator's own lag).
   */
  socketWaitMs: number;
  /** Whether the request went on a new connection, and from having the socket to its connection being up, ms (0 when reused). */
  newConnection: boolean;
  connectMs: number;
  /** From having the socket (or its connection up) to the answer's headers, ms. */
  toHeadersMs: number;
}

export interface OpenLoopResult extends PhaseResult {
  samples: OpenLoopSample[];
  /** Requests due in the phase (sent, answered or not). */
  due: number;
  /** Requests that got no HTTP answer (refused, reset, timed out), with when they were due. */
  failures: Array<{ dueAtMs: number; kind: string; index: number }>;
  /** Worst lag of a send behind its due time from the generator itself (event loop busy), ms. */
  maxSendLagMs: number;
}

let stopCurrent: (() => void) | null = null;
/** Ends the running open-loop phase early (Ctrl-C); it resolves with what it has. */
export function stopOpenLoop(): void {
  stopCurrent?.();
}

export async function runOpenLoop(target: OpenLoopTarget, opts: OpenLoopOptions): Promise<OpenLoopResult> {
  const url = new URL(target.path ?? '/v1/jobs', target.baseUrl);
  const timeoutMs = opts.timeoutMs ?? 10_000;
  // An agent-wide socket timeout is what makes Node 20 honour the server's `Keep-Alive: timeout=5`
  // (it then closes a free socket a second before the server would). Without one it ignores the
  // hint, keeps idle sockets until the server closes them, and a burst that reaches deep into the
  // pool sends on a socket the server is closing: ECONNRESET, 3-10 in 30,000 creates at 500/s.
  // It differs from the request timeout so that a reused socket gets the request's (Node applies
  // the request's only when the two differ).
  //
  // The client keeps every connection it opened (maxFreeSockets, Node's default 256): with the
  // default, each lull closed half the pool and the next burst reopened it, 13,000 new connections
  // in 30 s of overload, each waiting in the gateway's accept queue (Node 20 accepts one connection
  // per event-loop iteration) for seconds: the latency of a client that drops connections it holds.
  const maxSockets = opts.maxSockets ?? 512;
  const agent = new Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets, timeout: 6 * timeoutMs });
  const samples: OpenLoopSample[] = [];
  const opened = new WeakSet<object>();
  const errors: Record<string, number> = {};
  const failures: OpenLoopResult['failures'] = [];
  const intervalMs = 1000 / opts.rate;
  const total = Math.round(opts.rate * opts.durationS);
  const t0Perf = performance.now();
  const t0Epoch = Date.now();
  let sent = 0;
  let inFlight = 0;
  let maxSendLagMs = 0;
  let stopped = false;
  let finish: () => void = () => undefined;
  const finished = new Promise<void>((r) => (finish = r));
  const settle = () => {
    inFlight--;
    if (inFlight === 0 && (sent >= total || stopped)) finish();
  };

  const send = (i: number) => {
    const duePerf = t0Perf + i * intervalMs;
    maxSendLagMs = Math.max(maxSendLagMs, performance.now() - duePerf);
    inFlight++;
    let socketAt = Number.NaN;
    let connectedAt = Number.NaN;
    let newConnection = false;
    let headersAt = Number.NaN;
    const body = target.body(i);
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${target.token}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'idempotency-key': target.idempotencyKey?.(i) ?? randomUUID(),
        },
        timeout: timeoutMs,
      },
      (res) => {
        headersAt = performance.now();
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          let jobId: string | null = null;
          if (status >= 200 && status < 300) {
            try {
              jobId = String((JSON.parse(Buffer.concat(chunks).toString()) as { id?: unknown }).id ?? '') || null;
            } catch {
              jobId = null;
            }
          }
          const now = performance.now();
          samples.push({
            at: now - t0Perf,
            latencyMs: now - duePerf,
            status,
            dueAtMs: t0Epoch + i * intervalMs,
            jobId,
            index: i,
            socketWaitMs: socketAt - duePerf,
            newConnection,
            connectMs: newConnection ? connectedAt - socketAt : 0,
            toHeadersMs: headersAt - (newConnection ? connectedAt : socketAt),
          });
          settle();
        });
        res.on('error', (e) => fail(e));
      },
    );
    let failed = false;
    const fail = (e: Error) => {
      if (failed) return;
      failed = true;
      const k = (e as NodeJS.ErrnoException).code ?? e.message;
      errors[k] = (errors[k] ?? 0) + 1;
      failures.push({ dueAtMs: t0Epoch + i * intervalMs, kind: k, index: i });
      settle();
    };
    req.once('socket', (socket) => {
      socketAt = performance.now();
      // Not req.reusedSocket: Node leaves it false for a request that waited for a socket to come free.
      newConnection = !opened.has(socket);
      opened.add(socket);
      if (newConnection) socket.once('connect', () => (connectedAt = performance.now()));
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
    req.on('error', fail);
    req.end(body);
  };

  // A tick sends every request that has come due since the last one: timers are coarse (~1 ms and
  // later under load), the schedule is not.
  await new Promise<void>((resolve) => {
    const tick = () => {
      if (stopped) return resolve();
      const dueNow = Math.min(total, Math.floor((performance.now() - t0Perf) / intervalMs) + 1);
      while (sent < dueNow) send(sent++);
      if (sent >= total) return resolve();
      setTimeout(tick, Math.max(0, Math.min(intervalMs, t0Perf + sent * intervalMs - performance.now())));
    };
    stopCurrent = () => {
      stopped = true;
    };
    tick();
  });
  if (inFlight > 0) await finished;
  stopCurrent = null;
  agent.destroy();
  return { samples, errors, wallS: (performance.now() - t0Perf) / 1000, autocannon: [], due: sent, failures, maxSendLagMs };
}

/** The requests of an open-loop run from the `first`-th on (what is counted after a warm-up): samples, failures and error counts. */
export function measuredPart(run: OpenLoopResult, first: number): OpenLoopResult {
  const failures = run.failures.filter((f) => f.index >= first);
  const errors: Record<string, number> = {};
  for (const f of failures) errors[f.kind] = (errors[f.kind] ?? 0) + 1;
  return { ...run, samples: run.samples.filter((x) => x.index >= first), failures, errors, due: run.due - Math.min(first, run.due) };
}

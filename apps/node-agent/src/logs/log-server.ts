import { KeyObject } from 'node:crypto';
import { FileHandle, open } from 'node:fs/promises';
import { IncomingMessage, Server, ServerResponse, createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import { LOG_GRANT_SCHEME, refuseLogGrant } from '@gantry/messaging';
import type { Logger } from '@gantry/platform';
import { AttemptLogs } from './attempt-logs';
import { tailOffset } from './log-reader';

export interface LogServerOptions {
  /** The nodes this process speaks for: a grant must name one of them. */
  nodeIds: ReadonlySet<string>;
  /** The control plane's command public keys (GANTRY_COMMAND_PUBLIC_KEY): grants are signed with its key. */
  publicKeys: KeyObject[];
  logger: Logger;
  /** How often a follow looks for new bytes, ms. */
  pollMs?: number;
  /** After an attempt ends, how long a follow still waits for its last bytes (the process's pipes drain after it exits), ms. */
  settleMs?: number;
  /** How long a follow waits for an attempt's log to appear (its RUN may still be on its way), ms. */
  startWaitMs?: number;
  /** Streams served at once; past it 503. */
  maxStreams?: number;
  now?: () => number;
}

const CHUNK = 64 * 1024;
const MAX_TAIL_LINES = 1_000_000;
const ROUTE = /^\/v1\/logs\/([0-9a-fA-F-]{1,64})\/([0-9]{1,9})$/;

class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    detail: string,
  ) {
    super(detail);
  }
}

/**
 * Serves this agent's attempt logs to the gateway (ADR 0021): `GET /v1/logs/{jobId}/{attempt}
 * ?tailLines=&follow=` with `Authorization: Gantry-Log-Grant <grant>`. Nothing is answered without
 * a grant the control plane signed for that attempt on one of this agent's nodes, unexpired. The
 * body is the log as text/plain, read a chunk at a time and written only as fast as the reader
 * takes it; with follow=true the response stays open while the attempt runs and ends once it has
 * ended and its last bytes are sent.
 */
export class LogServer {
  private server: Server | null = null;
  private readonly open = new Set<ServerResponse>();
  private readonly pollMs: number;
  private readonly settleMs: number;
  private readonly startWaitMs: number;
  private readonly maxStreams: number;
  private readonly now: () => number;

  constructor(
    private readonly logs: AttemptLogs,
    private readonly opts: LogServerOptions,
  ) {
    this.pollMs = opts.pollMs ?? 200;
    this.settleMs = opts.settleMs ?? 500;
    this.startWaitMs = opts.startWaitMs ?? 30_000;
    this.maxStreams = opts.maxStreams ?? 256;
    this.now = opts.now ?? Date.now;
  }

  /** Listens on host:port (port 0: one the OS picks) and returns the port. */
  async listen(host: string, port: number): Promise<number> {
    const server = createServer((req, res) => void this.handle(req, res));
    server.headersTimeout = 10_000;
    server.requestTimeout = 10_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    this.server = server;
    return (server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    for (const res of this.open) res.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let fh: FileHandle | null = null;
    let closed = false;
    res.on('close', () => {
      closed = true;
      this.open.delete(res);
    });
    try {
      const url = new URL(req.url ?? '/', 'http://agent');
      const route = ROUTE.exec(url.pathname);
      if (req.method !== 'GET' || !route) throw new Refusal(404, 'Not Found', 'GET /v1/logs/{jobId}/{attempt} is all this serves');
      const jobId = route[1];
      const attempt = Number(route[2]);
      const auth = req.headers.authorization ?? '';
      const token = auth.startsWith(`${LOG_GRANT_SCHEME} `) ? auth.slice(LOG_GRANT_SCHEME.length + 1) : undefined;
      const verdict = refuseLogGrant(token, { jobId, attempt, nodeIds: this.opts.nodeIds }, this.opts.publicKeys, this.now());
      if (verdict.refusal !== null) throw new Refusal(401, 'Unauthorized', `no valid log grant for this attempt (${verdict.refusal})`);
      const { follow, tailLines } = parseQuery(url.searchParams);
      if (this.open.size >= this.maxStreams) throw new Refusal(503, 'Service Unavailable', `this agent serves ${this.open.size} log streams, its limit`);
      this.open.add(res);
      const path = this.logs.path(jobId, attempt);
      fh = await this.openLog(path, follow ? this.now() + this.startWaitMs : 0, () => closed);
      if (!fh) throw new Refusal(404, 'Not Found', `no log of job ${jobId} attempt ${attempt} on this node`);
      const size = (await fh.stat()).size;
      let position = (tailLines === null ? 0 : await tailOffset(fh, size, tailLines)) + this.logs.droppedBytes(path);
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
      // Without follow: what the file held when asked, not a chase after a job that writes faster than it is read.
      const stopAt = follow ? Infinity : size + this.logs.droppedBytes(path);
      const buf = Buffer.allocUnsafe(CHUNK);
      while (!closed) {
        const dropped = this.logs.droppedBytes(path);
        // Trimmed past where this reader was: what it had not read yet is gone; go on from the oldest kept byte.
        if (position < dropped) position = dropped;
        const want = Math.min(CHUNK, stopAt - position);
        const { bytesRead } = want > 0 ? await fh.read(buf, 0, want, position - dropped) : { bytesRead: 0 };
        if (bytesRead > 0) {
          position += bytesRead;
          if (!res.write(Buffer.from(buf.subarray(0, bytesRead)))) await new Promise((r) => res.once('drain', r).once('close', r));
          continue;
        }
        if (!follow || this.followOver(jobId, attempt)) break;
        await new Promise((r) => setTimeout(r, this.pollMs));
      }
      res.end();
    } catch (e) {
      if (e instanceof Refusal) {
        if (!res.headersSent) {
          res.writeHead(e.status, { 'content-type': 'application/problem+json' });
          res.end(JSON.stringify({ type: 'about:blank', title: e.title, status: e.status, detail: e.message }));
        } else res.destroy();
      } else {
        this.opts.logger.warn({ err: e }, 'log stream failed');
        if (!res.headersSent) {
          res.writeHead(500, { 'content-type': 'application/problem+json' });
          res.end(JSON.stringify({ type: 'about:blank', title: 'Internal Server Error', status: 500, detail: 'the log could not be read' }));
        } else res.destroy();
      }
    } finally {
      this.open.delete(res);
      await fh?.close();
    }
  }

  /** The log, once it exists (waiting until `waitUntil` for it to appear), or null. */
  private async openLog(path: string, waitUntil: number, gone: () => boolean): Promise<FileHandle | null> {
    for (;;) {
      try {
        return await open(path, 'r');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      }
      if (gone() || this.now() >= waitUntil) return null;
      await new Promise((r) => setTimeout(r, this.pollMs));
    }
  }

  /** At the end of what was written: whether more can still come. */
  private followOver(jobId: string, attempt: number): boolean {
    const s = this.logs.state(jobId, attempt);
    if (s.kind === 'running') return false;
    // Ended here: its pipes may still be draining into the file for a moment after the exit.
    if (s.kind === 'ended') return this.now() - s.endedAt >= this.settleMs;
    // Not started by this process (ended before it started, or not yet started): what is there is all there is.
    return true;
  }
}

function parseQuery(q: URLSearchParams): { follow: boolean; tailLines: number | null } {
  for (const k of q.keys()) {
    if (k !== 'follow' && k !== 'tailLines') throw new Refusal(400, 'Bad Request', `unknown parameter ${k}`);
  }
  const follow = q.get('follow');
  if (follow !== null && follow !== 'true' && follow !== 'false') throw new Refusal(400, 'Bad Request', 'follow must be true or false');
  const tail = q.get('tailLines');
  if (tail !== null && !(/^[0-9]{1,7}$/.test(tail) && Number(tail) >= 1 && Number(tail) <= MAX_TAIL_LINES)) {
    throw new Refusal(400, 'Bad Request', `tailLines must be an integer 1..${MAX_TAIL_LINES}`);
  }
  return { follow: follow === 'true', tailLines: tail === null ? null : Number(tail) };
}

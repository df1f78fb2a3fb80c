import type { Server } from 'node:http';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';

/**
 * Graceful HTTP shutdown. `server.close()` alone waits for every keep-alive connection to go idle,
 * which under steady load never happens (a SIGTERMed gateway hung until SIGKILL in test:chaos).
 * Draining stops accepting connections, answers each further request with `Connection: close` so
 * clients move to another replica, waits for the requests in flight, then closes what is left.
 */
export class HttpDrain {
  private draining = false;
  private inFlight = 0;

  /** Fastify `onRequest` hook: counts requests in flight and, once draining, asks clients to close their connection. */
  readonly onRequest = (_req: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    this.inFlight++;
    reply.raw.once('close', () => this.inFlight--);
    if (this.draining) void reply.header('connection', 'close');
    done();
  };

  /** Resolves once the requests in flight have finished (or `timeoutMs` passed) and every connection is closed. */
  async drain(server: Server, timeoutMs: number): Promise<void> {
    this.draining = true;
    server.close();
    server.closeIdleConnections();
    const deadline = Date.now() + timeoutMs;
    while (this.inFlight > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 10));
      server.closeIdleConnections();
    }
    server.closeAllConnections();
  }
}

import { IncomingMessage, request } from 'node:http';
import { LOG_GRANT_SCHEME } from '@gantry/messaging';

export interface AgentLogRequest {
  address: string;
  port: number;
  jobId: string;
  attempt: number;
  /** A signed log grant for (jobId, attempt, the node). */
  grant: string;
  tailLines?: number;
  follow: boolean;
  /** Until the agent answers with headers, ms (a follow of an attempt not yet started waits on the agent for up to 30 s). */
  headersTimeoutMs: number;
  /** Without follow: the longest silence in the body before it is given up, ms. */
  idleTimeoutMs: number;
}

/** An agent that could not be reached or did not answer in time. */
export class AgentUnreachable extends Error {}

/** GET /v1/logs/{jobId}/{attempt} on the node's agent (ADR 0021): resolves with its response, headers read, body not. */
export function requestAgentLog(r: AgentLogRequest): Promise<IncomingMessage> {
  const query = new URLSearchParams({ follow: String(r.follow), ...(r.tailLines !== undefined ? { tailLines: String(r.tailLines) } : {}) });
  return new Promise((resolve, reject) => {
    const req = request({
      host: r.address,
      port: r.port,
      method: 'GET',
      path: `/v1/logs/${encodeURIComponent(r.jobId)}/${r.attempt}?${query}`,
      headers: { authorization: `${LOG_GRANT_SCHEME} ${r.grant}`, accept: 'text/plain' },
    });
    const timer = setTimeout(() => req.destroy(new AgentUnreachable(`no answer within ${r.headersTimeoutMs} ms`)), r.headersTimeoutMs);
    req.once('error', (e) => {
      clearTimeout(timer);
      reject(e instanceof AgentUnreachable ? e : new AgentUnreachable(e.message));
    });
    req.once('response', (res) => {
      clearTimeout(timer);
      if (!r.follow) res.setTimeout(r.idleTimeoutMs, () => res.destroy(new AgentUnreachable(`silent for ${r.idleTimeoutMs} ms`)));
      resolve(res);
    });
    req.end();
  });
}

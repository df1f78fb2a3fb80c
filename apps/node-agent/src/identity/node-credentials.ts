import { readFileSync } from 'node:fs';
import type { Logger } from '@gantry/platform';
import { AgentEnv } from '../config';
import { NodesToEnroll, enrollThroughGateway } from './enrollment-client';

/**
 * The credentials of the nodes this agent speaks for, loaded once: enrolled through the gateway (a
 * simulated fleet, a dev agent), or the one its operator enrolled it with (GANTRY_NODE_CREDENTIAL or
 * GANTRY_NODE_CREDENTIAL_FILE). Shared by what signs beats and reports and by a real agent's Kafka
 * token source, which needs its credential before anything else starts: enrolling twice would
 * rotate the first credential away.
 */
export class NodeCredentials {
  private loading: Promise<Map<string, string>> | null = null;

  private readonly nodeIds: readonly string[];

  /** `nodes`: each node this agent speaks for, with what to declare of it where it enrolls itself (ADR 0035). */
  constructor(
    private readonly config: AgentEnv,
    private readonly nodes: NodesToEnroll,
    private readonly logger: Pick<Logger, 'info'>,
  ) {
    this.nodeIds = [...nodes.keys()];
  }

  all(): Promise<Map<string, string>> {
    this.loading ??= this.load();
    return this.loading;
  }

  async of(nodeId: string): Promise<string> {
    const credential = (await this.all()).get(nodeId);
    if (!credential) throw new Error(`no credential for node ${nodeId}`);
    return credential;
  }

  private async load(): Promise<Map<string, string>> {
    const c = this.config;
    const credentials = new Map<string, string>();
    if (c.GANTRY_ENROLL_URL && c.GANTRY_ENROLL_TOKEN) {
      const t0 = Date.now();
      for (const [nodeId, credential] of await enrollThroughGateway(c.GANTRY_ENROLL_URL, c.GANTRY_ENROLL_TOKEN, this.nodes))
        credentials.set(nodeId, credential);
      this.logger.info({ nodes: credentials.size, ms: Date.now() - t0 }, 'nodes enrolled');
    } else if (c.GANTRY_SIM_NODES === 0 && (c.GANTRY_NODE_CREDENTIAL || c.GANTRY_NODE_CREDENTIAL_FILE)) {
      const credential = c.GANTRY_NODE_CREDENTIAL ?? readFileSync(c.GANTRY_NODE_CREDENTIAL_FILE!, 'utf8').split('\n')[0].trim();
      for (const nodeId of this.nodeIds) credentials.set(nodeId, credential);
    }
    const missing = this.nodeIds.filter((id) => !credentials.has(id));
    if (missing.length > 0) {
      throw new Error(
        `no credential for ${missing.length} node(s) (${missing.slice(0, 3).join(', ')}): set GANTRY_NODE_CREDENTIAL or GANTRY_NODE_CREDENTIAL_FILE (a real agent, from its enrollment) or GANTRY_ENROLL_URL and GANTRY_ENROLL_TOKEN (a simulated fleet)`,
      );
    }
    return credentials;
  }
}

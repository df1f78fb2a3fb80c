import { Counter } from 'prom-client';
import { AgentKafkaTokenView } from '@gantry/contracts';
import { kafkaTokenUsable } from '@gantry/domain';
import { SIGNATURE_HEADER, nodeSigningKey, signKafkaTokenRequest } from '@gantry/messaging';
import type { Logger } from '@gantry/platform';

export interface KafkaTokenSourceOptions {
  /** The gateway's base URL. */
  gatewayUrl: string;
  nodeId: string;
  /** The node's credential, once it is known (from the environment, a file, or enrollment through the gateway). */
  credential: () => Promise<string>;
  logger: Pick<Logger, 'warn' | 'info'>;
  now?: () => number;
  /** Longest wait for one answer from the gateway, ms. */
  requestTimeoutMs?: number;
  /** Longest a caller without a usable token waits for one, asking again meanwhile, ms. */
  deadlineMs?: number;
}

interface Held {
  value: string;
  issuedAt: number;
  expiresAt: number;
  principal: string;
}

const obtained = new Counter({
  name: 'gantry_agent_kafka_tokens_obtained_total',
  help: "Kafka tokens this real agent got from the gateway for its node's principal (the first, then one per renewal; ADR 0034)",
});

/** A refusal the gateway will repeat (a 4xx other than 429): asking again at once is pointless. */
class TokenRefused extends Error {}

/**
 * A real agent's Kafka tokens (ADR 0034): asked of the gateway with a fresh proof of the node's
 * credential, held while fresh (kafkaTokenUsable), renewed past half their life. kafkajs asks for one
 * each time a connection authenticates, and again before the broker ends its session; callers at the
 * same time share one request. A renewal that fails leaves the held token in use while it lasts; a
 * caller with no usable token retries until `deadlineMs`, then fails, and kafkajs tries the
 * connection again. The gateway refuses a revoked node: its connections end with its last token.
 */
export class KafkaTokenSource {
  private held: Held | null = null;
  private inFlight: Promise<Held> | null = null;
  private readonly now: () => number;

  constructor(private readonly o: KafkaTokenSourceOptions) {
    this.now = o.now ?? Date.now;
  }

  /** The principal of the last token (for logs and the start-up line), null before the first. */
  get principal(): string | null {
    return this.held?.principal ?? null;
  }

  async token(): Promise<string> {
    const state = kafkaTokenUsable(this.held, this.now());
    if (state === 'fresh') return this.held!.value;
    if (state === 'renew') {
      try {
        return (await this.fetchShared()).value;
      } catch (err) {
        this.o.logger.warn(
          { err: (err as Error).message, expiresAt: new Date(this.held!.expiresAt).toISOString() },
          'Kafka token not renewed; using the one held',
        );
        return this.held!.value;
      }
    }
    const deadline = this.now() + (this.o.deadlineMs ?? 30_000);
    for (let attempt = 0; ; attempt++) {
      try {
        return (await this.fetchShared()).value;
      } catch (err) {
        if (err instanceof TokenRefused || this.now() >= deadline) throw err;
        await new Promise((r) => setTimeout(r, Math.min(2_000, 100 * 2 ** attempt)));
      }
    }
  }

  private fetchShared(): Promise<Held> {
    this.inFlight ??= this.fetch().finally(() => (this.inFlight = null));
    return this.inFlight;
  }

  private async fetch(): Promise<Held> {
    const { nodeId } = this.o;
    const key = nodeSigningKey(await this.o.credential());
    const at = this.now();
    const res = await fetch(`${this.o.gatewayUrl.replace(/\/$/, '')}/v1/nodes/${encodeURIComponent(nodeId)}/kafka-token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signKafkaTokenRequest(nodeId, at, key) },
      body: JSON.stringify({ at }),
      signal: AbortSignal.timeout(this.o.requestTimeoutMs ?? 10_000),
    });
    if (res.status !== 200) {
      const text = (await res.text()).slice(0, 300);
      const message = `the gateway refused a Kafka token for node ${nodeId}: ${res.status} ${text}`;
      throw res.status >= 400 && res.status < 500 && res.status !== 429 ? new TokenRefused(message) : new Error(message);
    }
    const body = (await res.json()) as AgentKafkaTokenView;
    obtained.inc();
    const first = this.held === null;
    this.held = { value: body.token, issuedAt: at, expiresAt: Date.parse(body.expiresAt), principal: body.principal };
    if (first) this.o.logger.info({ principal: body.principal, groupId: body.groupId, expiresAt: body.expiresAt }, 'Kafka token obtained');
    return this.held;
  }
}

/** A Kafka token an agent holds: when it was issued and when the broker stops taking it, epoch ms. */
export interface HeldKafkaToken {
  issuedAt: number;
  expiresAt: number;
}

/**
 * Whether an agent may hand this token to a connection that authenticates now, or should ask the
 * gateway for a fresh one (ADR 0034). The broker ends a session when its token expires, and kafkajs
 * authenticates again shortly before; a token past half its life is renewed, so each session
 * lasts at least half a token's life and a gateway outage of as long is survived with the token held.
 * A token that has expired is never handed out.
 */
export function kafkaTokenUsable(token: HeldKafkaToken | null, now: number): 'fresh' | 'renew' | 'expired' {
  if (!token || now >= token.expiresAt) return 'expired';
  return now < token.issuedAt + (token.expiresAt - token.issuedAt) / 2 ? 'fresh' : 'renew';
}

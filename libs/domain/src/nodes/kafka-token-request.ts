/** A node's enrollment as the control plane knows it. */
export interface EnrollmentState {
  generation: number;
  revoked: boolean;
}

export type KafkaTokenRefusal = 'unknown-node' | 'revoked' | 'bad-signature' | 'clock-skew';

export type KafkaTokenJudgement = { grant: { generation: number } } | { refused: KafkaTokenRefusal };

/**
 * May a node have a Kafka token now (ADR 0034)? It must be enrolled and not revoked, its request
 * signed with the credential of its current generation (so a rotated credential gets nothing),
 * and asked within `skewMs` of `now` (a recorded request is worth nothing later; within the window
 * the gateway accepts each signature once). The token is for that generation's principal.
 */
export function judgeKafkaTokenRequest(
  enrollment: EnrollmentState | null,
  request: { at: number; signedBy: (generation: number) => boolean },
  now: number,
  skewMs: number,
): KafkaTokenJudgement {
  if (!enrollment) return { refused: 'unknown-node' };
  if (enrollment.revoked) return { refused: 'revoked' };
  if (!request.signedBy(enrollment.generation)) return { refused: 'bad-signature' };
  if (Math.abs(request.at - now) > skewMs) return { refused: 'clock-skew' };
  return { grant: { generation: enrollment.generation } };
}

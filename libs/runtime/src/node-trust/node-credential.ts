import { createHmac } from 'node:crypto';

/**
 * A node's credential: derived, never stored. HMAC-SHA256 of the node id and its enrollment
 * generation under the control plane's secret (GANTRY_NODE_CREDENTIAL_SECRET), base64url. The
 * gateway hands it out once at enrollment; the ingester and the reconciler derive it again to
 * check signatures. Enrolling again bumps the generation, so the old credential no longer matches.
 */
export function deriveNodeCredential(secret: string, nodeId: string, generation: number): string {
  return createHmac('sha256', secret).update(`gantry-node-credential/v1\n${nodeId}\n${generation}`).digest('base64url');
}

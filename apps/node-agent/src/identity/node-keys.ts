import { KeyObject } from 'node:crypto';
import { NODE_ID_HEADER, SIGNATURE_HEADER, nodeSigningKey, signNodeMessage } from '@gantry/messaging';

/**
 * The credentials of the nodes this agent speaks for, as signing keys. Every beat and report goes
 * out with the headers that prove which node sent it (contract 4.1): gantry-node-id and
 * gantry-signature over the value's bytes exactly as sent.
 */
export class NodeKeys {
  private readonly keys = new Map<string, KeyObject>();

  set(nodeId: string, credential: string): void {
    this.keys.set(nodeId, nodeSigningKey(credential));
  }

  has(nodeId: string): boolean {
    return this.keys.has(nodeId);
  }

  /** The headers of a message from `nodeId` whose value is `value`. */
  headers(nodeId: string, value: string | Buffer): Record<string, string> {
    const key = this.keys.get(nodeId);
    if (!key) throw new Error(`no credential for node ${nodeId}`);
    return { [NODE_ID_HEADER]: nodeId, [SIGNATURE_HEADER]: signNodeMessage(value, key) };
  }
}

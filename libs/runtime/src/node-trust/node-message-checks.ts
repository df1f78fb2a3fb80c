import { ConsumedMessage, NODE_ID_HEADER, RawMessage, Rejection, SIGNATURE_HEADER, nodeSignatureMatches } from '@gantry/messaging';
import { NodeCredentialDirectory } from './node-credential-directory';

/**
 * Is a beat or report from the node it names (contract 4.1)? Signed (header gantry-signature), by
 * the node in header gantry-node-id (which is also the message key), enrolled and not revoked, with
 * its current credential. Checked on the value's bytes exactly as received, before parsing.
 */
export function authenticateNodeMessage(directory: NodeCredentialDirectory): (m: RawMessage) => Rejection | null {
  return (m) => {
    const signature = m.headers[SIGNATURE_HEADER];
    const nodeId = m.headers[NODE_ID_HEADER];
    if (signature === undefined || nodeId === undefined) return { reason: 'unsigned' };
    if (m.key !== nodeId) return { reason: 'node-mismatch', detail: `key ${JSON.stringify(m.key)} is not the signing node ${JSON.stringify(nodeId)}` };
    // Refusals that a moment-old change could explain are retryable: the consumer asks the
    // directory to read what changed (reauthenticateNodeMessages) and looks once more.
    const found = directory.keyOf(nodeId);
    if ('refused' in found) return { reason: found.refused, detail: `node ${JSON.stringify(nodeId.slice(0, 253))}`, retryable: true };
    if (m.value === null || !nodeSignatureMatches(m.value, signature, found.key)) return { reason: 'bad-signature', detail: `node ${nodeId}`, retryable: true };
    return null;
  };
}

/** When messages failed to verify: read the enrollments that changed, so they can be looked at once more. */
export function reauthenticateNodeMessages(directory: NodeCredentialDirectory): () => Promise<void> {
  return () => directory.refreshSoon();
}

/**
 * May the signing node say this, now? The node id in the body must be the signer's, and the time
 * the sender put in it (`sentAt`, `at`) within `skewMs` of when the broker received the message
 * (LogAppendTime: a message that waited in Kafka is not refused for waiting).
 */
export function admitNodeMessage<T>(bodyNodeId: (v: T) => string, bodyTime: (v: T) => number, skewMs: number): (item: ConsumedMessage<T>) => Rejection | null {
  return (item) => {
    const signer = item.headers[NODE_ID_HEADER];
    if (bodyNodeId(item.value) !== signer) return { reason: 'node-mismatch', detail: `body names ${bodyNodeId(item.value)}, signed by ${signer}` };
    const skew = bodyTime(item.value) - item.timestamp;
    if (Math.abs(skew) > skewMs) return { reason: 'clock-skew', detail: `${skew} ms from the broker's receive time` };
    return null;
  };
}

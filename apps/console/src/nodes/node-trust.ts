import type { Node } from '@gantry/client';
import { mib } from '../shell/format';

/** Why a cordoned node is, in words (ADR 0035); null when it is not cordoned. */
export function cordonText(n: Pick<Node, 'cordoned' | 'cordonReason'>): string | null {
  if (!n.cordoned) return null;
  switch (n.cordonReason) {
    case 'START_FAILURES':
      return 'start failures: it did not start its work in time, several times in a row';
    case 'DRAIN':
      return 'drained';
    case 'OPERATOR':
      return 'by an operator';
    default:
      return 'reason unknown';
  }
}

/** The node's pinned inventory: all placement may ever believe of it (ADR 0035). */
export function declaredText(n: Pick<Node, 'declared'>): string {
  const d = n.declared;
  if (!d) return 'nothing pinned yet: the first inventory it reports will be';
  return `${d.gpus ? `${d.gpus.count} × ${d.gpus.model}` : 'no GPUs'}, ${d.cpuCores} cores, ${mib(d.memoryMiB)}, address ${d.address ?? 'not pinned yet'}`;
}

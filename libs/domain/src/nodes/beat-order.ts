/**
 * Which heartbeat of a node is newest (contract 4.1): the control plane's receive order, never a
 * clock or counter the sender chose alone. Within one boot of the agent, seq must rise; a beat
 * that does not raise it came later than one that did, so it is a replay. A new boot is taken
 * when it arrives, and the boots it replaced are remembered: a beat from one of them is a replay too.
 * A message read again (the same offset or an earlier one: Kafka redelivers after a restart or a
 * rebalance) is neither newer nor a replay, only a repeat.
 */
export interface BeatCursor {
  bootId: string;
  seq: number;
  /** Boots this node had before the current one, newest first (at most PAST_BOOTS_KEPT). */
  pastBoots: readonly string[];
  /** Offset of the beat the cursor was taken from, in its partition (a decimal string). */
  offset: string;
}

export const PAST_BOOTS_KEPT = 8;

export type BeatVerdict =
  | { kind: 'newer'; cursor: BeatCursor }
  /** Read again (at or before the cursor's offset): skip it quietly. */
  | { kind: 'repeat' }
  /** Same boot without a higher seq, or a boot already replaced: a replay, refused. */
  | { kind: 'replayed'; why: 'seq-not-higher' | 'old-boot' };

export function judgeBeat(cursor: BeatCursor | null, beat: { bootId: string; seq: number }, offset: string): BeatVerdict {
  if (cursor === null) return { kind: 'newer', cursor: { bootId: beat.bootId, seq: beat.seq, pastBoots: [], offset } };
  if (BigInt(offset) <= BigInt(cursor.offset)) return { kind: 'repeat' };
  if (beat.bootId === cursor.bootId) {
    return beat.seq > cursor.seq ? { kind: 'newer', cursor: { ...cursor, seq: beat.seq, offset } } : { kind: 'replayed', why: 'seq-not-higher' };
  }
  if (cursor.pastBoots.includes(beat.bootId)) return { kind: 'replayed', why: 'old-boot' };
  return { kind: 'newer', cursor: { bootId: beat.bootId, seq: beat.seq, pastBoots: [cursor.bootId, ...cursor.pastBoots].slice(0, PAST_BOOTS_KEPT), offset } };
}

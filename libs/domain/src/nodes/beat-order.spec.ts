import fc from 'fast-check';
import { BeatCursor, PAST_BOOTS_KEPT, judgeBeat } from './beat-order';

const cursor = (over: Partial<BeatCursor> = {}): BeatCursor => ({ bootId: 'b1', seq: 10, pastBoots: [], offset: '100', ...over });

describe('judgeBeat', () => {
  it.each([
    ['the first beat of a node', null, { bootId: 'b1', seq: 1 }, '5', 'newer'],
    ['a higher seq of the same boot', cursor(), { bootId: 'b1', seq: 11 }, '101', 'newer'],
    ['a seq gap (beats lost on the way)', cursor(), { bootId: 'b1', seq: 99 }, '101', 'newer'],
    ['the same seq again at a later offset', cursor(), { bootId: 'b1', seq: 10 }, '101', 'replayed'],
    ['a lower seq at a later offset', cursor(), { bootId: 'b1', seq: 3 }, '101', 'replayed'],
    ['a new boot, whatever its seq', cursor(), { bootId: 'b2', seq: 0 }, '101', 'newer'],
    ['a beat of a boot already replaced', cursor({ bootId: 'b2', pastBoots: ['b1'] }), { bootId: 'b1', seq: 50 }, '101', 'replayed'],
    ['a redelivery (same offset)', cursor(), { bootId: 'b1', seq: 10 }, '100', 'repeat'],
    ['a redelivery (earlier offset)', cursor(), { bootId: 'b1', seq: 9 }, '99', 'repeat'],
  ] as const)('%s', (_name, c, beat, offset, kind) => {
    expect(judgeBeat(c, beat, offset).kind).toBe(kind);
  });

  it('remembers the replaced boot, newest first, and at most PAST_BOOTS_KEPT', () => {
    let c: BeatCursor | null = null;
    for (let i = 0; i < PAST_BOOTS_KEPT + 3; i++) {
      const v = judgeBeat(c, { bootId: `b${i}`, seq: 0 }, String(i));
      if (v.kind !== 'newer') throw new Error('expected newer');
      c = v.cursor;
    }
    expect(c!.bootId).toBe(`b${PAST_BOOTS_KEPT + 2}`);
    expect(c!.pastBoots).toHaveLength(PAST_BOOTS_KEPT);
    expect(c!.pastBoots[0]).toBe(`b${PAST_BOOTS_KEPT + 1}`);
  });

  it('never accepts a beat that is not after the cursor in receive order, and accepts each honest beat exactly once', () => {
    // An honest agent's beats in order, with replays of earlier ones mixed in: of its current boot or
    // of the PAST_BOOTS_KEPT before (an older boot's beat is also older than the clock-skew window
    // unless the agent restarted more than PAST_BOOTS_KEPT times within it).
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(3), fc.boolean(), fc.nat(30)), { maxLength: 200 }), (script) => {
        const sent: Array<{ bootId: string; seq: number; boot: number }> = [];
        let boot = 0;
        let seq = 0;
        let offset = 0;
        let c: BeatCursor | null = null;
        let accepted = 0;
        let honest = 0;
        for (const [restart, replay, pick] of script) {
          const recent = sent.filter((b) => b.boot >= boot - PAST_BOOTS_KEPT);
          if (replay && recent.length > 0) {
            const old = recent[pick % recent.length];
            const v = judgeBeat(c, old, String(++offset));
            expect(v.kind).not.toBe('newer');
            continue;
          }
          if (restart === 0) [boot, seq] = [boot + 1, 0];
          const beat = { bootId: `boot-${boot}`, seq: ++seq, boot };
          sent.push(beat);
          honest++;
          const v = judgeBeat(c, beat, String(++offset));
          if (v.kind === 'newer') {
            accepted++;
            c = v.cursor;
          }
        }
        expect(accepted).toBe(honest);
      }),
    );
  });
});

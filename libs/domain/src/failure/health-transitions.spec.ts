import { HealthTransition, ObservedNode, RecordedHealth, UNRECORDED, healthTransitions, observedHealth } from './health-transitions';

const t = { suspectMs: 15_000, deadMs: 40_000 };
const rec = (health: RecordedHealth['health'], held = false, heldSinceMs: number | null = null): RecordedHealth => ({ health, held, heldSinceMs });
const obs = (silenceMs: number, o: Partial<ObservedNode> = {}): ObservedNode => ({
  nodeId: 'n',
  silenceMs,
  heardSinceInfoBegan: true,
  held: false,
  heldSinceMs: null,
  ...o,
});

describe('healthTransitions', () => {
  it.each<[string, RecordedHealth | undefined, ObservedNode, [string, string, boolean] | null]>([
    ['an unrecorded node beating normally writes nothing', undefined, obs(1_000), null],
    ['a healthy node stays quiet within the suspect time', rec('HEALTHY'), obs(14_999), null],
    ['silent past suspect: DEGRADED', rec('HEALTHY'), obs(15_000), ['DEGRADED', 'SILENT_PAST_SUSPECT', false]],
    ['an unrecorded node silent past suspect: DEGRADED', undefined, obs(20_000), ['DEGRADED', 'SILENT_PAST_SUSPECT', false]],
    ['still degraded: nothing', rec('DEGRADED'), obs(39_999), null],
    ['silent past dead: UNHEALTHY', rec('DEGRADED'), obs(40_000), ['UNHEALTHY', 'SILENT_PAST_DEAD', false]],
    ['straight from HEALTHY to UNHEALTHY (a slow round)', rec('HEALTHY'), obs(41_000), ['UNHEALTHY', 'SILENT_PAST_DEAD', false]],
    ['dead in a partitioned rack: held', rec('DEGRADED'), obs(40_000, { held: true, heldSinceMs: 5 }), ['UNHEALTHY', 'PARTITION_HELD', true]],
    ['already held: nothing', rec('UNHEALTHY', true, 5), obs(60_000, { held: true, heldSinceMs: 5 }), null],
    ['hold ran out, still silent', rec('UNHEALTHY', true, 5), obs(400_000, { held: false, heldSinceMs: 5 }), ['UNHEALTHY', 'PARTITION_HOLD_EXPIRED', false]],
    ['held node heard again', rec('UNHEALTHY', true, 5), obs(100), ['HEALTHY', 'HEARD', false]],
    ['dead node heard again', rec('UNHEALTHY'), obs(100), ['HEALTHY', 'HEARD', false]],
    ['degraded node heard again', rec('DEGRADED'), obs(100), ['HEALTHY', 'HEARD', false]],
    // After a Redis restart a node not yet heard has a short silence (counted from the restart):
    ['not heard since Redis restarted: an UNHEALTHY node stays UNHEALTHY', rec('UNHEALTHY'), obs(1_000, { heardSinceInfoBegan: false }), null],
    ['not heard since Redis restarted: a DEGRADED node stays DEGRADED', rec('DEGRADED'), obs(1_000, { heardSinceInfoBegan: false }), null],
    [
      'not heard since Redis restarted, silent on: gets worse',
      rec('DEGRADED'),
      obs(40_000, { heardSinceInfoBegan: false }),
      ['UNHEALTHY', 'SILENT_PAST_DEAD', false],
    ],
    ['not heard since Redis restarted, healthy: stays healthy', rec('HEALTHY'), obs(1_000, { heardSinceInfoBegan: false }), null],
  ])('%s', (_name, recorded, o, expected) => {
    const got: HealthTransition[] = healthTransitions(new Map(recorded ? [['n', recorded]] : []), [o], t);
    if (expected === null) return expect(got).toEqual([]);
    expect(got).toHaveLength(1);
    expect([got[0].to.health, got[0].reason, got[0].to.held]).toEqual(expected);
    expect(got[0].from).toEqual(recorded ?? UNRECORDED);
  });

  it('50,000 nodes beating normally yield no transitions; only the ones that changed are written', () => {
    const observed = Array.from({ length: 50_000 }, (_, i) => obs(i === 7 ? 20_000 : 500, { nodeId: `n${i}` }));
    const got = healthTransitions(new Map(), observed, t);
    expect(got.map((x) => x.nodeId)).toEqual(['n7']);
  });

  it('a held node keeps its hold start; a dead node outside a hold has none', () => {
    expect(observedHealth(UNRECORDED, obs(50_000, { held: true, heldSinceMs: 42 }), t)).toEqual(rec('UNHEALTHY', true, 42));
    expect(observedHealth(UNRECORDED, obs(20_000, { held: true, heldSinceMs: 42 }), t)).toEqual(rec('DEGRADED'));
  });
});

import { EnrollmentState, judgeKafkaTokenRequest } from './kafka-token-request';

const NOW = 1_800_000_000_000;
const SKEW = 30_000;
const enrolled = (generation: number, revoked = false): EnrollmentState => ({ generation, revoked });
/** Signed with the credential of generation `g`. */
const signedAt = (g: number, at = NOW) => ({ at, signedBy: (generation: number) => generation === g });

describe('judgeKafkaTokenRequest', () => {
  it.each<[string, EnrollmentState | null, ReturnType<typeof signedAt>, object]>([
    ['an enrolled node with its current credential', enrolled(3), signedAt(3), { grant: { generation: 3 } }],
    ['asked at the edge of the skew window (early)', enrolled(1), signedAt(1, NOW - SKEW), { grant: { generation: 1 } }],
    ['asked at the edge of the skew window (late)', enrolled(1), signedAt(1, NOW + SKEW), { grant: { generation: 1 } }],
    ['a node never enrolled', null, signedAt(1), { refused: 'unknown-node' }],
    ['a revoked node, even with its last credential', enrolled(2, true), signedAt(2), { refused: 'revoked' }],
    ['a rotated credential (the generation before)', enrolled(4), signedAt(3), { refused: 'bad-signature' }],
    ["another node's credential", enrolled(1), { at: NOW, signedBy: () => false }, { refused: 'bad-signature' }],
    ['a request older than the window', enrolled(1), signedAt(1, NOW - SKEW - 1), { refused: 'clock-skew' }],
    ['a request dated in the future', enrolled(1), signedAt(1, NOW + SKEW + 1), { refused: 'clock-skew' }],
    ['a forged request dated badly: the signature is judged first', enrolled(1), { at: 0, signedBy: () => false }, { refused: 'bad-signature' }],
  ])('%s', (_name, enrollment, request, expected) => {
    expect(judgeKafkaTokenRequest(enrollment, request, NOW, SKEW)).toEqual(expected);
  });
});

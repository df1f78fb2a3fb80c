import { canonicalJson, canonicalSha256 } from './canonical-json';

describe('canonicalJson', () => {
  it.each<[unknown, string]>([
    [{ b: 1, a: 2 }, '{"a":2,"b":1}'],
    [{ a: { d: [3, { z: 1, y: 2 }], c: null } }, '{"a":{"c":null,"d":[3,{"y":2,"z":1}]}}'],
    [[2, 1], '[2,1]'],
    ['x"y', '"x\\"y"'],
    [{ a: undefined, b: 1 }, '{"b":1}'],
  ])('%j -> %s', (input, expected) => expect(canonicalJson(input)).toBe(expected));

  it('hashes equal bodies equally whatever the key order, and different bodies differently', () => {
    expect(canonicalSha256({ name: 'a', resources: { gpus: 1, cpuCores: 2 } })).toBe(canonicalSha256({ resources: { cpuCores: 2, gpus: 1 }, name: 'a' }));
    expect(canonicalSha256({ name: 'a' })).not.toBe(canonicalSha256({ name: 'b' }));
    expect(canonicalSha256({ command: ['a', 'b'] })).not.toBe(canonicalSha256({ command: ['b', 'a'] }));
  });
});

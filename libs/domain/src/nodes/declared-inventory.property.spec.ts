import fc from 'fast-check';
import { believedTopology, pinAfterReport } from './declared-inventory';
import { NodeTopology } from './node-topology';

const MODELS = ['H100', 'A100', null] as const;

const reportArb = fc
  .record({
    model: fc.constantFrom(...MODELS),
    indices: fc.uniqueArray(fc.integer({ min: 0, max: 63 }), { maxLength: 16 }),
    cpuCores: fc.integer({ min: 0, max: 512 }),
    memoryMiB: fc.integer({ min: 0, max: 4_194_304 }),
    address: fc.constantFrom('10.0.0.1', '10.0.0.2', null),
  })
  .map(({ model, indices, ...r }): NodeTopology => {
    const gpuIndices = model === null ? [] : [...indices].sort((a, b) => a - b);
    return { id: 'n', zone: 'z', rack: 'r', gpuModel: model, gpusTotal: gpuIndices.length, gpuIndices, logsPort: null, ...r };
  });

const inventoryArb = fc.record({
  gpus: fc.option(fc.record({ model: fc.constantFrom('H100', 'A100'), count: fc.integer({ min: 1, max: 64 }) })),
  cpuCores: fc.integer({ min: 0, max: 512 }),
  memoryMiB: fc.integer({ min: 0, max: 4_194_304 }),
  address: fc.constantFrom('10.0.0.1', '10.0.0.2', null),
});

describe('believedTopology (properties)', () => {
  it('never credits more than either what is pinned or what is reported, and only devices the node reports', () => {
    fc.assert(
      fc.property(reportArb, fc.option(inventoryArb), (r, declared) => {
        const pin = pinAfterReport(declared, r);
        const { topology: t } = believedTopology(r, pin);
        expect(t.gpusTotal).toBeLessThanOrEqual(Math.min(r.gpusTotal, pin.gpus?.count ?? 0));
        expect(t.gpusTotal).toBe(t.gpuIndices.length);
        expect(t.gpuIndices.every((i) => r.gpuIndices.includes(i))).toBe(true);
        expect(t.cpuCores).toBe(Math.min(r.cpuCores, pin.cpuCores));
        expect(t.memoryMiB).toBe(Math.min(r.memoryMiB, pin.memoryMiB));
        expect(t.address).toBe(pin.address);
        if (t.gpusTotal > 0) expect(t.gpuModel).toBe(pin.gpus!.model);
      }),
      { numRuns: 1000 },
    );
  });

  it('names a resource as exceeded exactly when the report claims more of it than it is credited', () => {
    fc.assert(
      fc.property(reportArb, inventoryArb, (r, pin) => {
        const { topology: t, exceeded } = believedTopology(r, pin);
        expect(exceeded.includes('gpus')).toBe(r.gpusTotal > t.gpusTotal);
        expect(exceeded.includes('cpuCores')).toBe(r.cpuCores > t.cpuCores);
        expect(exceeded.includes('memoryMiB')).toBe(r.memoryMiB > t.memoryMiB);
      }),
      { numRuns: 1000 },
    );
  });

  it('pinning is settled by the first report: a second report changes nothing pinned but an address not yet known', () => {
    fc.assert(
      fc.property(reportArb, reportArb, fc.option(inventoryArb), (first, second, declared) => {
        const once = pinAfterReport(declared, first);
        const twice = pinAfterReport(once, second);
        expect({ ...twice, address: null }).toEqual({ ...once, address: null });
        if (once.address !== null) expect(twice.address).toBe(once.address);
      }),
      { numRuns: 500 },
    );
  });
});

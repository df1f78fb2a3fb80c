import { cellOf, layoutHeatmap, nodeAt } from './heatmap-layout';
import { toAbgr, utilisationColour } from './heatmap-colours';

const racks = (zones: number, perZone: number, nodes: number) =>
  Array.from({ length: zones * perZone }, (_, i) => ({ zone: `z${Math.floor(i / perZone)}`, rack: `r${i % perZone}`, nodes }));

describe('layoutHeatmap', () => {
  it('gives a small fleet big cells and every node its own cell', () => {
    const l = layoutHeatmap(racks(2, 3, 4), 1000, 500);
    expect(l.cell).toBe(14);
    expect(l.zones.map((z) => [z.zone, z.racks, z.nodes])).toEqual([
      ['z0', 3, 12],
      ['z1', 3, 12],
    ]);
    const seen = new Set<string>();
    for (const b of l.racks) for (let k = 0; k < b.nodes; k++) seen.add(JSON.stringify(cellOf(b, k, l.cell)));
    expect(seen.size).toBe(24);
  });

  it.each([5_000, 50_000])('fits %i nodes (racks of 20, three zones) into 1,200 x 700 px', (n) => {
    const l = layoutHeatmap(racks(3, n / 60, 20), 1200, 700);
    expect(l.height).toBeLessThanOrEqual(700);
    expect(l.racks.every((b) => b.x + Math.ceil(b.nodes / b.rows) * l.cell <= 1200)).toBe(true);
    expect(l.racks.reduce((s, b) => s + b.nodes, 0)).toBe(n);
  });

  it('finds the node under a point, and none in the gaps', () => {
    const l = layoutHeatmap(racks(1, 2, 3), 400, 300);
    const b = l.racks[1];
    const c = cellOf(b, 2, l.cell);
    expect(nodeAt(l, c.x + 1, c.y + 1)).toBe(b.start + 2);
    expect(nodeAt(l, b.x - 1, b.y)).toBe(-1);
    expect(nodeAt(l, 0, 0)).toBe(-1); // the zone's label line
  });

  it('folds a rack taller than a column into several columns', () => {
    const l = layoutHeatmap([{ zone: 'z', rack: 'big', nodes: 100 }], 1000, 2000);
    expect(l.racks[0].rows).toBe(40);
    expect(cellOf(l.racks[0], 40, l.cell)).toEqual({ x: l.cell, y: l.racks[0].y });
  });
});

describe('heatmap colours', () => {
  it.each([
    [-1, '#c4cbd3'],
    [0, 'rgb(224, 236, 250)'],
    [100, 'rgb(8, 48, 107)'],
  ])('utilisation %i %% is %s', (p, c) => expect(utilisationColour(p)).toBe(c));

  it('packs colours in ImageData byte order', () => {
    expect(toAbgr('#1a7f37').toString(16)).toBe('ff377f1a');
    expect(toAbgr('rgb(1, 2, 3)').toString(16)).toBe('ff030201');
  });
});

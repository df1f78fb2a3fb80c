/**
 * Where each node of the fleet heatmap is drawn (pure). Zones are bands, one under another, each
 * with a label line; in a zone, racks are columns of cells, side by side, wrapping onto more rows
 * of racks; a rack taller than MAX_COLUMN cells folds into several columns. The cell size is the
 * largest (up to MAX_CELL) at which the whole fleet fits the target height, so 100 nodes are big
 * squares and 50,000 still fit a laptop screen at 2-3 px.
 */
export interface RackInput {
  zone: string;
  rack: string;
  nodes: number;
}

export interface RackBox {
  zone: string;
  rack: string;
  /** Index of the rack's first node in the heatmap's per-node arrays. */
  start: number;
  nodes: number;
  x: number;
  y: number;
  /** Cells per column (the rest fold into the next column). */
  rows: number;
}

export interface ZoneBand {
  zone: string;
  /** Where its label line starts. */
  y: number;
  racks: number;
  nodes: number;
}

export interface HeatmapLayout {
  cell: number;
  width: number;
  height: number;
  zones: ZoneBand[];
  racks: RackBox[];
}

export const LABEL_HEIGHT = 18;
const MAX_CELL = 14;
const MIN_CELL = 2;
const MAX_COLUMN = 40;
/** Space between racks and between rows of racks, px. */
const GAP = 2;

function place(input: readonly RackInput[], width: number, cell: number): HeatmapLayout {
  const rowsOf = Math.min(MAX_COLUMN, Math.max(1, ...input.map((r) => r.nodes)));
  const zones: ZoneBand[] = [];
  const racks: RackBox[] = [];
  let y = 0;
  let start = 0;
  let x = 0;
  let rowHeight = 0;
  for (const r of input) {
    let zone = zones[zones.length - 1];
    if (!zone || zone.zone !== r.zone) {
      if (zone) y += rowHeight + GAP * 3;
      zone = { zone: r.zone, y, racks: 0, nodes: 0 };
      zones.push(zone);
      y += LABEL_HEIGHT;
      x = 0;
      rowHeight = 0;
    }
    const rows = Math.min(rowsOf, Math.max(1, r.nodes));
    const w = Math.ceil(r.nodes / rows) * cell;
    if (x > 0 && x + w > width) {
      y += rowHeight + GAP;
      x = 0;
    }
    racks.push({ zone: r.zone, rack: r.rack, start, nodes: r.nodes, x, y, rows });
    rowHeight = Math.max(rowHeight, rowsOf * cell);
    x += w + GAP;
    start += r.nodes;
    zone.racks++;
    zone.nodes += r.nodes;
  }
  return { cell, width, height: zones.length ? y + rowHeight : 0, zones, racks };
}

export function layoutHeatmap(input: readonly RackInput[], width: number, targetHeight: number): HeatmapLayout {
  let layout = place(input, width, MIN_CELL);
  for (let cell = MAX_CELL; cell > MIN_CELL; cell--) {
    const candidate = place(input, width, cell);
    if (candidate.height <= targetHeight) {
      layout = candidate;
      break;
    }
  }
  return layout;
}

/** The cell rectangle of a rack's k-th node. */
export function cellOf(box: RackBox, k: number, cell: number): { x: number; y: number } {
  return { x: box.x + Math.floor(k / box.rows) * cell, y: box.y + (k % box.rows) * cell };
}

/** The node index under a point, or -1. */
export function nodeAt(layout: HeatmapLayout, px: number, py: number): number {
  const c = layout.cell;
  for (const b of layout.racks) {
    if (py < b.y || py >= b.y + b.rows * c || px < b.x) continue;
    const col = Math.floor((px - b.x) / c);
    const row = Math.floor((py - b.y) / c);
    const k = col * b.rows + row;
    if (col < Math.ceil(b.nodes / b.rows) && k < b.nodes) return b.start + k;
  }
  return -1;
}

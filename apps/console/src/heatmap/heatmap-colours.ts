/**
 * The heatmap's colours (pure). Health uses the status colours of the rest of the console; the
 * utilisation scale is one hue from light to dark, readable by people with any common colour
 * blindness, with unknown values in neutral grey.
 */
export type HeatmapMode = 'health' | 'gpu';

export const HEALTH_COLOURS: Record<string, string> = { H: '#1a7f37', D: '#bf5700', U: '#cf222e' };
export const UNKNOWN_COLOUR = '#c4cbd3';

/** Light blue at 0 % to dark blue at 100 %. */
const SCALE = [
  [224, 236, 250],
  [158, 199, 238],
  [84, 150, 214],
  [31, 96, 176],
  [8, 48, 107],
];

export function utilisationColour(percent: number): string {
  if (percent < 0) return UNKNOWN_COLOUR;
  const t = (Math.min(100, percent) / 100) * (SCALE.length - 1);
  const i = Math.min(SCALE.length - 2, Math.floor(t));
  const f = t - i;
  const c = SCALE[i].map((v, k) => Math.round(v + (SCALE[i + 1][k] - v) * f));
  return `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
}

export function utilisationStops(): string[] {
  return [0, 25, 50, 75, 100].map(utilisationColour);
}

/** "#rrggbb" or "rgb(r, g, b)" -> 0xAABBGGRR, the byte order of ImageData on little-endian machines. */
export function toAbgr(colour: string): number {
  let r = 0;
  let g = 0;
  let b = 0;
  if (colour.startsWith('#')) {
    const n = parseInt(colour.slice(1), 16);
    [r, g, b] = [(n >> 16) & 255, (n >> 8) & 255, n & 255];
  } else {
    [r, g, b] = (colour.match(/\d+/g) ?? ['0', '0', '0']).map(Number);
  }
  return ((255 << 24) | (b << 16) | (g << 8) | r) >>> 0;
}

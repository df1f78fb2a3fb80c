import { html, nothing } from 'lit';
import type { ClusterHeatmap } from '@gantry/client';
import { cssProps } from '../shell/css-props';
import { LightElement } from '../shell/light-element';
import { href, navigate } from '../shell/router';
import { count } from '../shell/format';
import { HEALTH_COLOURS, HeatmapMode, UNKNOWN_COLOUR, toAbgr, utilisationColour, utilisationStops } from './heatmap-colours';
import { HeatmapLayout, LABEL_HEIGHT, cellOf, layoutHeatmap, nodeAt } from './heatmap-layout';

const HEALTH_NAMES: Record<string, string> = { H: 'healthy', D: 'degraded', U: 'unhealthy' };
const CORDON_MARK = toAbgr('#24292f');
const WHITE = 0xffffffff;

/**
 * The fleet as a canvas of cells, one per node, coloured by health or GPU utilisation. Pixels are
 * written straight into one ImageData (no path per node), so 50,000 nodes draw in a few
 * milliseconds. The first draw sets the performance mark `gantry:heatmap-drawn` (the browser tests
 * measure from navigation to it).
 */
export class FleetHeatmap extends LightElement {
  static override properties = { data: { attribute: false }, mode: {}, tip: { state: true } };
  declare data: ClusterHeatmap | null;
  declare mode: HeatmapMode;
  declare tip: { text: string; x: number; y: number } | null;
  private layout: HeatmapLayout | null = null;
  private cordoned = new Set<number>();
  private drawnOnce = false;
  private resize = new ResizeObserver(() => this.draw());

  constructor() {
    super();
    this.data = null;
    this.mode = 'health';
    this.tip = null;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    this.resize.observe(this);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.resize.disconnect();
  }

  protected override render() {
    const d = this.data;
    const n = d?.nodeIds.length ?? 0;
    return html`
      <div class="heatmap-frame">
        <canvas
          role="img"
          aria-label=${d ? this.describe(d) : 'Fleet heatmap, loading'}
          data-nodes=${n}
          @mousemove=${this.onMove}
          @mouseleave=${() => (this.tip = null)}
          @click=${this.onClick}
        ></canvas>
        ${this.tip ? html`<div class="heatmap-tip" ${cssProps({ left: `${this.tip.x}px`, top: `${this.tip.y}px` })}>${this.tip.text}</div>` : nothing}
      </div>
      ${this.legend()}
    `;
  }

  protected override updated(): void {
    this.draw();
  }

  private describe(d: ClusterHeatmap): string {
    const h = { H: 0, D: 0, U: 0 } as Record<string, number>;
    for (const c of d.health) h[c]++;
    return `Fleet heatmap by ${this.mode === 'gpu' ? 'GPU utilisation' : 'health'}: ${count(d.nodeIds.length)} nodes in ${count(d.racks.length)} racks; ${count(h.H)} healthy, ${count(h.D)} degraded, ${count(h.U)} unhealthy, ${count(d.cordoned.length)} cordoned. The zone table below has the same numbers.`;
  }

  private legend() {
    if (this.mode === 'gpu') {
      return html`<div class="legend" aria-hidden="true">
        <span>GPU utilisation</span><span class="scale">${utilisationStops().map((c) => html`<i ${swatch(c)}></i>`)}</span><span>0 → 100 %</span>
        <span><i ${swatch(UNKNOWN_COLOUR)}></i> no GPUs / no telemetry</span><span><i class="cordon-mark"></i> cordoned</span>
      </div>`;
    }
    return html`<div class="legend" aria-hidden="true">
      ${Object.entries(HEALTH_NAMES).map(([k, name]) => html`<span><i ${swatch(HEALTH_COLOURS[k])}></i> ${name}</span>`)}
      <span><i class="cordon-mark"></i> cordoned</span>
    </div>`;
  }

  private colourOf(d: ClusterHeatmap, i: number): string {
    if (this.mode === 'gpu') return d.health[i] === 'U' ? UNKNOWN_COLOUR : utilisationColour(d.gpusTotal[i] > 0 ? d.gpuUtil[i] : -1);
    return HEALTH_COLOURS[d.health[i]] ?? UNKNOWN_COLOUR;
  }

  private draw(): void {
    const canvas = this.querySelector('canvas');
    const d = this.data;
    if (!canvas || !d) return;
    const width = Math.max(200, Math.floor(this.clientWidth || 800));
    this.layout = layoutHeatmap(d.racks, width, Math.max(320, Math.round(window.innerHeight * 0.6)));
    this.cordoned = new Set(d.cordoned);
    const dpr = Math.min(2, window.devicePixelRatio || 1);
    const l = this.layout;
    const w = Math.ceil(l.width * dpr);
    const h = Math.max(1, Math.ceil(l.height * dpr));
    canvas.width = w;
    canvas.height = h;
    canvas.style.width = `${l.width}px`;
    canvas.style.height = `${l.height}px`;
    const ctx = canvas.getContext('2d');
    if (!ctx) return;
    const image = ctx.createImageData(w, h);
    const px = new Uint32Array(image.data.buffer);
    px.fill(WHITE);
    const size = Math.max(1, Math.round(l.cell * dpr));
    // Cells of 4 px and more keep a 1 px gap, so neighbours read as separate nodes.
    const fill = size >= 4 ? size - Math.round(dpr) : size;
    const colours = new Map<string, number>();
    for (const box of l.racks) {
      for (let k = 0; k < box.nodes; k++) {
        const i = box.start + k;
        const colour = this.colourOf(d, i);
        let abgr = colours.get(colour);
        if (abgr === undefined) colours.set(colour, (abgr = toAbgr(colour)));
        const c = cellOf(box, k, l.cell);
        const x0 = Math.round(c.x * dpr);
        const y0 = Math.round(c.y * dpr);
        paint(px, w, h, x0, y0, fill, fill, abgr);
        if (this.cordoned.has(i)) {
          const m = Math.max(1, Math.floor(fill / 3));
          paint(px, w, h, x0 + m, y0 + m, fill - 2 * m, fill - 2 * m, CORDON_MARK);
        }
      }
    }
    ctx.putImageData(image, 0, 0);
    ctx.scale(dpr, dpr);
    ctx.fillStyle = '#1f2328';
    ctx.font = '600 12px system-ui, sans-serif';
    ctx.textBaseline = 'top';
    for (const z of l.zones) ctx.fillText(`${z.zone} · ${count(z.racks)} racks · ${count(z.nodes)} nodes`, 0, z.y + (LABEL_HEIGHT - 14) / 2);
    if (!this.drawnOnce) {
      this.drawnOnce = true;
      performance.mark('gantry:heatmap-drawn', { detail: { nodes: d.nodeIds.length } });
      canvas.dataset.drawn = String(d.nodeIds.length);
    }
  }

  private indexAt(e: MouseEvent): number {
    if (!this.layout) return -1;
    const r = (e.currentTarget as HTMLCanvasElement).getBoundingClientRect();
    return nodeAt(this.layout, e.clientX - r.left, e.clientY - r.top);
  }

  private onMove = (e: MouseEvent): void => {
    const d = this.data;
    const i = this.indexAt(e);
    if (!d || i < 0) {
      this.tip = null;
      return;
    }
    const box = this.layout!.racks.find((b) => i >= b.start && i < b.start + b.nodes)!;
    const util = d.gpusTotal[i] > 0 && d.gpuUtil[i] >= 0 ? `, GPU ${d.gpuUtil[i]} %` : '';
    const text = `${d.nodeIds[i]} (${box.zone}/${box.rack}): ${HEALTH_NAMES[d.health[i]]}${this.cordoned.has(i) ? ', cordoned' : ''}, ${d.gpusAllocated[i]}/${d.gpusTotal[i]} GPUs${util}`;
    const frame = (e.currentTarget as HTMLElement).getBoundingClientRect();
    this.tip = { text, x: e.clientX - frame.left + 12, y: e.clientY - frame.top + 12 };
  };

  private onClick = (e: MouseEvent): void => {
    const i = this.indexAt(e);
    if (this.data && i >= 0) navigate(href.node(this.data.nodeIds[i]));
  };
}

function paint(px: Uint32Array, w: number, h: number, x0: number, y0: number, cw: number, ch: number, abgr: number): void {
  for (let y = Math.max(0, y0); y < Math.min(h, y0 + ch); y++) px.fill(abgr, y * w + Math.max(0, x0), y * w + Math.min(w, x0 + cw));
}

const swatch = (colour: string) => cssProps({ background: colour });

customElements.define('gantry-fleet-heatmap', FleetHeatmap);

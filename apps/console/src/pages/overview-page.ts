import { html, nothing } from 'lit';
import type { ClusterHeatmap, ClusterSummary, Queue } from '@gantry/client';
import '../heatmap/fleet-heatmap';
import type { HeatmapMode } from '../heatmap/heatmap-colours';
import { count, percent } from '../shell/format';
import { href } from '../shell/router';
import { Poller, errorBox } from '../shell/ui';
import { PageElement } from './page-element';

/** How often the overview re-reads the summary, the heatmap and the queues. */
const REFRESH_MS = 5_000;

interface ZoneRow {
  zone: string;
  racks: number;
  nodes: number;
  H: number;
  D: number;
  U: number;
  cordoned: number;
  gpuUtil: number | null;
}

/** Per zone, the heatmap's numbers as text: the table that stands beside the picture. */
export function zoneRows(d: ClusterHeatmap): ZoneRow[] {
  const rows: ZoneRow[] = [];
  const cordoned = new Set(d.cordoned);
  let start = 0;
  let utilSum = 0;
  let utilN = 0;
  for (const r of d.racks) {
    let row = rows[rows.length - 1];
    if (!row || row.zone !== r.zone) {
      if (row) row.gpuUtil = utilN ? Math.round(utilSum / utilN) : null;
      row = { zone: r.zone, racks: 0, nodes: 0, H: 0, D: 0, U: 0, cordoned: 0, gpuUtil: null };
      rows.push(row);
      utilSum = 0;
      utilN = 0;
    }
    row.racks++;
    for (let i = start; i < start + r.nodes; i++) {
      row.nodes++;
      row[d.health[i] as 'H' | 'D' | 'U']++;
      if (cordoned.has(i)) row.cordoned++;
      if (d.gpusTotal[i] > 0 && d.gpuUtil[i] >= 0 && d.health[i] !== 'U') {
        utilSum += d.gpuUtil[i];
        utilN++;
      }
    }
    start += r.nodes;
  }
  const last = rows[rows.length - 1];
  if (last) last.gpuUtil = utilN ? Math.round(utilSum / utilN) : null;
  return rows;
}

export class OverviewPage extends PageElement {
  static override properties = {
    summary: { state: true },
    heatmap: { state: true },
    queues: { state: true },
    mode: { state: true },
    error: { state: true },
  };
  declare summary: ClusterSummary | null;
  declare heatmap: ClusterHeatmap | null;
  declare queues: Queue[] | null;
  declare mode: HeatmapMode;
  declare error: unknown;
  // The three reads are independent: the heatmap is drawn as soon as it arrives.
  private pollers = [
    new Poller(this, async () => this.guard(async () => (this.heatmap = await this.session.client.clusterHeatmap())), REFRESH_MS),
    new Poller(this, async () => this.guard(async () => (this.summary = await this.session.client.clusterSummary())), REFRESH_MS),
    new Poller(this, async () => this.guard(async () => (this.queues = await this.session.client.listQueues())), REFRESH_MS),
  ];

  constructor() {
    super();
    this.summary = null;
    this.heatmap = null;
    this.queues = null;
    this.mode = 'health';
    this.error = null;
  }

  private async guard(read: () => Promise<unknown>): Promise<void> {
    try {
      await read();
      this.error = null;
    } catch (e) {
      this.error = e;
      throw e;
    }
  }

  protected override render() {
    return html`
      <h1>Overview</h1>
      ${errorBox(this.error)}
      <section class="panel" aria-labelledby="fleet-heading">
        <div class="panel-head">
          <h2 id="fleet-heading">Fleet</h2>
          <fieldset class="segmented">
            <legend class="visually-hidden">Colour nodes by</legend>
            ${(['health', 'gpu'] as const).map(
              (m) =>
                html`<label
                  ><input type="radio" name="heatmap-mode" value=${m} .checked=${this.mode === m} @change=${() => (this.mode = m)} />
                  ${m === 'health' ? 'Health' : 'GPU utilisation'}</label
                >`,
            )}
          </fieldset>
        </div>
        <gantry-fleet-heatmap .data=${this.heatmap} .mode=${this.mode}></gantry-fleet-heatmap>
        ${this.heatmap ? this.zoneTable(this.heatmap) : html`<p aria-live="polite">Loading the fleet…</p>`}
      </section>
      <div class="cards">${this.nodesCard()} ${this.gpusCard()} ${this.jobsCard()}</div>
      ${this.queuesPanel()}
    `;
  }

  private zoneTable(d: ClusterHeatmap) {
    return html`<div class="table-wrap" tabindex="0" role="region" aria-label="Nodes by zone">
      <table class="compact">
        <caption class="visually-hidden">
          Nodes by zone
        </caption>
        <thead>
          <tr>
            <th scope="col">Zone</th>
            <th scope="col" class="num">Racks</th>
            <th scope="col" class="num">Nodes</th>
            <th scope="col" class="num">Healthy</th>
            <th scope="col" class="num">Degraded</th>
            <th scope="col" class="num">Unhealthy</th>
            <th scope="col" class="num">Cordoned</th>
            <th scope="col" class="num">Mean GPU use</th>
          </tr>
        </thead>
        <tbody>
          ${zoneRows(d).map(
            (z) =>
              html`<tr>
                <th scope="row"><a href=${href.nodes({ zone: z.zone })}>${z.zone}</a></th>
                <td class="num">${count(z.racks)}</td>
                <td class="num">${count(z.nodes)}</td>
                <td class="num">${count(z.H)}</td>
                <td class="num">${count(z.D)}</td>
                <td class="num">${count(z.U)}</td>
                <td class="num">${count(z.cordoned)}</td>
                <td class="num">${z.gpuUtil === null ? '—' : `${z.gpuUtil} %`}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>`;
  }

  private nodesCard() {
    const s = this.summary;
    return html`<section class="card" aria-labelledby="nodes-heading">
      <h2 id="nodes-heading">Nodes</h2>
      ${
        s
          ? html`<dl class="stats">
              <div>
                <dt>Registered</dt>
                <dd>${count(s.nodes)}</dd>
              </div>
              <div>
                <dt><a href=${href.nodes({ health: 'HEALTHY' })}>Healthy</a></dt>
                <dd>${count(s.nodesByHealth.HEALTHY)}</dd>
              </div>
              <div>
                <dt><a href=${href.nodes({ health: 'DEGRADED' })}>Degraded</a></dt>
                <dd>${count(s.nodesByHealth.DEGRADED)}</dd>
              </div>
              <div>
                <dt><a href=${href.nodes({ health: 'UNHEALTHY' })}>Unhealthy</a></dt>
                <dd>${count(s.nodesByHealth.UNHEALTHY)}</dd>
              </div>
              <div>
                <dt>Mean GPU use</dt>
                <dd>${percent(s.utilisation.gpu)}</dd>
              </div>
              <div>
                <dt>Mean CPU use</dt>
                <dd>${percent(s.utilisation.cpu)}</dd>
              </div>
            </dl>`
          : html`<p>Loading…</p>`
      }
    </section>`;
  }

  private gpusCard() {
    const s = this.summary;
    return html`<section class="card" aria-labelledby="gpus-heading">
      <h2 id="gpus-heading">GPUs by model</h2>
      ${
        s
          ? html`<table class="compact">
              <thead>
                <tr>
                  <th scope="col">Model</th>
                  <th scope="col" class="num">Allocated</th>
                  <th scope="col" class="num">Free</th>
                  <th scope="col" class="num">Total</th>
                </tr>
              </thead>
              <tbody>
                ${s.gpus
                  .filter((g) => g.model !== null)
                  .map(
                    (g) =>
                      html`<tr>
                          <th scope="row">${g.model}</th>
                          <td class="num">${count(g.allocated)}</td>
                          <td class="num">${count(g.free)}</td>
                          <td class="num">${count(g.total)}</td>
                        </tr>
                        <tr class="bar-row">
                          <td colspan="4">
                            <meter
                              min="0"
                              max=${Math.max(1, g.total)}
                              value=${g.allocated}
                              aria-label=${`${g.model}: ${g.allocated} of ${g.total} allocated`}
                            ></meter>
                          </td>
                        </tr>`,
                  )}
              </tbody>
            </table>`
          : html`<p>Loading…</p>`
      }
    </section>`;
  }

  private jobsCard() {
    const s = this.summary;
    return html`<section class="card" aria-labelledby="jobs-heading">
      <h2 id="jobs-heading">Jobs by state</h2>
      ${
        s
          ? html`<dl class="stats">
              ${Object.entries(s.jobsByState).map(
                ([state, n]) =>
                  html`<div>
                    <dt><a href=${href.jobs({ state })}>${state}</a></dt>
                    <dd>${count(n)}</dd>
                  </div>`,
              )}
            </dl>`
          : html`<p>Loading…</p>`
      }
    </section>`;
  }

  private queuesPanel() {
    const q = this.queues;
    return html`<section class="panel" aria-labelledby="queues-heading">
      <h2 id="queues-heading">Queues</h2>
      ${
        q
          ? html`<div class="table-wrap" tabindex="0" role="region" aria-label="Queues' depth and usage">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Queue</th>
                    <th scope="col" class="num">Priority</th>
                    <th scope="col" class="num">Queued</th>
                    <th scope="col" class="num">Running</th>
                    <th scope="col">GPUs held / quota</th>
                  </tr>
                </thead>
                <tbody>
                  ${q.map(
                    (x) =>
                      html`<tr>
                        <th scope="row"><a href=${href.jobs({ queue: x.name })}>${x.name}</a></th>
                        <td class="num">${x.priority}</td>
                        <td class="num">${count(x.usage.jobsQueued)}</td>
                        <td class="num">${count(x.usage.jobsRunning)}</td>
                        <td>
                          ${
                            x.quota.gpus === null
                              ? html`${count(x.usage.gpusHeld)} <span class="muted">(no quota)</span>`
                              : html`<meter
                                    min="0"
                                    max=${Math.max(1, x.quota.gpus)}
                                    high=${Math.max(1, x.quota.gpus) * 0.9}
                                    value=${x.usage.gpusHeld}
                                    aria-label=${`${x.name}: ${x.usage.gpusHeld} of ${x.quota.gpus} GPUs`}
                                  ></meter>
                                  ${count(x.usage.gpusHeld)} / ${count(x.quota.gpus)}`
                          }
                        </td>
                      </tr>`,
                  )}
                </tbody>
              </table>
            </div>`
          : nothing
      }
    </section>`;
  }
}

customElements.define('gantry-overview-page', OverviewPage);

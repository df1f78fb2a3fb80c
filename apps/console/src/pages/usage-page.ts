import { html, nothing, svg } from 'lit';
import type { UsageRow } from '@gantry/client';
import { cssProps } from '../shell/css-props';
import { count } from '../shell/format';
import { errorBox } from '../shell/ui';
import { usageChartModel } from '../usage/usage-chart-model';
import { PageElement } from './page-element';

const DAY_MS = 86_400_000;
/** Bar colours by series: the legend and the table say the same in words. */
const PALETTE = ['#3b6fd9', '#e0803a', '#3aa676', '#c2455e', '#8a5cc7', '#a3862b', '#2f9eb3', '#7a7a7a'];
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * GPU-hours by owner over time (GET /v1/usage, ADR 0037): stacked bars per day (or hour, month),
 * and each owner's totals. A user sees their own usage, an operator everyone's.
 */
export class UsagePage extends PageElement {
  static override properties = { rows: { state: true }, error: { state: true }, loading: { state: true } };
  declare rows: UsageRow[] | null;
  declare error: unknown;
  declare loading: boolean;
  private query = { from: isoDay(Date.now() - 29 * DAY_MS), to: isoDay(Date.now() + DAY_MS), granularity: 'day' as 'hour' | 'day' | 'month' };

  constructor() {
    super();
    this.rows = null;
    this.error = null;
    this.loading = false;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    void this.load();
  }

  private async load(): Promise<void> {
    this.loading = true;
    try {
      this.rows = await this.session.client.usage({ ...this.query, groupBy: 'owner' });
      this.error = null;
    } catch (e) {
      this.error = e;
    } finally {
      this.loading = false;
    }
  }

  private submit = (e: SubmitEvent): void => {
    e.preventDefault();
    const f = new FormData(e.target as HTMLFormElement);
    this.query = { from: String(f.get('from')), to: String(f.get('to')), granularity: String(f.get('granularity')) as 'hour' | 'day' | 'month' };
    void this.load();
  };

  protected override render() {
    return html`
      <h1>Usage</h1>
      <form class="filters" @submit=${this.submit} aria-label="Usage range">
        <label>From <input name="from" type="date" required .value=${this.query.from} /></label>
        <label>To (excluded) <input name="to" type="date" required .value=${this.query.to} /></label>
        <label
          >Per
          <select name="granularity">
            ${(['hour', 'day', 'month'] as const).map((g) => html`<option value=${g} ?selected=${g === this.query.granularity}>${g}</option>`)}
          </select></label
        >
        <button type="submit">Show</button>
      </form>
      ${errorBox(this.error)} ${this.rows === null ? (this.loading ? html`<p role="status">Loading…</p>` : nothing) : this.chart(this.rows)}
    `;
  }

  private chart(rows: UsageRow[]) {
    const model = usageChartModel(rows);
    if (model.buckets.length === 0) return html`<p class="usage-empty" role="status">No usage in this range.</p>`;
    const [w, h, pad] = [Math.max(300, model.buckets.length * 16), 160, 2];
    const barW = w / model.buckets.length;
    const colour = (i: number) => PALETTE[i % PALETTE.length];
    const totals = new Map<string, { cpu: number; attempts: number; jobs: number }>();
    for (const r of rows) {
      const t = totals.get(r.owner ?? '') ?? { cpu: 0, attempts: 0, jobs: 0 };
      totals.set(r.owner ?? '', { cpu: t.cpu + r.cpuSeconds / 3600, attempts: t.attempts + r.attempts, jobs: t.jobs + r.jobs });
    }
    return html`
      <figure class="usage-chart">
        <svg
          viewBox="0 0 ${w} ${h}"
          preserveAspectRatio="none"
          role="img"
          aria-label=${`GPU-hours by owner per ${this.query.granularity}, ${model.buckets[0]} to ${model.buckets[model.buckets.length - 1]}; the table below has the numbers`}
        >
          ${model.buckets.map((b, i) => {
            let y = h;
            return model.series.map((s, k) => {
              const bh = (s.gpuHours[i] / model.max) * h;
              y -= bh;
              return bh > 0
                ? svg`<rect x=${i * barW + pad / 2} y=${y} width=${Math.max(1, barW - pad)} height=${bh} fill=${colour(k)}><title>${`${s.owner}, ${b}: ${s.gpuHours[i].toFixed(2)} GPU-hours`}</title></rect>`
                : nothing;
            });
          })}
        </svg>
        <figcaption>
          ${
            model.series.some((s) => s.total > 0)
              ? `GPU-hours per ${this.query.granularity} (UTC), tallest bar ${model.max.toFixed(1)}; ${model.buckets[0].slice(0, 10)} to ${model.buckets[model.buckets.length - 1].slice(0, 10)}.`
              : 'No GPU time in this range; CPU time, attempts and jobs are in the table.'
          }
        </figcaption>
      </figure>
      <div class="table-wrap" tabindex="0" role="region" aria-label="Usage by owner">
        <table class="usage-table">
          <caption class="visually-hidden">
            Usage by owner in the range, most GPU-hours first
          </caption>
          <thead>
            <tr>
              <th scope="col">Owner</th>
              <th scope="col" class="num">GPU-hours</th>
              <th scope="col" class="num">CPU-hours</th>
              <th scope="col" class="num">Attempts</th>
              <th scope="col" class="num">Jobs</th>
            </tr>
          </thead>
          <tbody>
            ${model.series.map((s, k) => {
              const t = totals.get(s.owner)!;
              return html`<tr data-owner=${s.owner}>
                <th scope="row"><span class="swatch" ${cssProps({ background: colour(k) })} aria-hidden="true"></span> ${s.owner}</th>
                <td class="num">${s.total.toFixed(2)}</td>
                <td class="num">${t.cpu.toFixed(2)}</td>
                <td class="num">${count(t.attempts)}</td>
                <td class="num">${count(t.jobs)}</td>
              </tr>`;
            })}
          </tbody>
        </table>
      </div>
    `;
  }
}

customElements.define('gantry-usage-page', UsagePage);

import { html, nothing } from 'lit';
import type { Node } from '@gantry/client';
import { count, mib, time } from '../shell/format';
import { href, navigate } from '../shell/router';
import { badge, errorBox } from '../shell/ui';
import { ListPage } from './list-page';

const HEALTHS = ['HEALTHY', 'DEGRADED', 'UNHEALTHY'] as const;
const PAGE = 100;

/** Nodes in id order, filtered by health, GPU model and zone, paged with the cursor. */
export class NodesPage extends ListPage<Node> {
  static override properties = { models: { state: true } };
  declare models: string[];
  private generation = 0;

  constructor() {
    super();
    this.models = [];
  }

  get filter() {
    const h = this.query.get('health');
    return {
      health: (HEALTHS as readonly string[]).includes(h ?? '') ? (h as Node['health']) : undefined,
      gpuModel: this.query.get('gpuModel') || undefined,
      zone: this.query.get('zone') || undefined,
    };
  }

  override connectedCallback(): void {
    super.connectedCallback();
    void this.session.client.clusterSummary().then(
      (s) => (this.models = s.gpus.flatMap((g) => (g.model ? [g.model] : []))),
      () => undefined,
    );
    void this.load(true);
  }

  protected override willUpdate(changed: Map<string, unknown>): void {
    if (changed.has('query') && changed.get('query') !== undefined) void this.load(true);
  }

  private async load(fresh: boolean): Promise<void> {
    const generation = fresh ? ++this.generation : this.generation;
    if (fresh) {
      this.rows = [];
      this.nextCursor = null;
    }
    this.loading = true;
    try {
      const page = await this.session.client.listNodes({ ...this.filter, limit: PAGE, cursor: fresh ? undefined : (this.nextCursor ?? undefined) });
      if (generation !== this.generation) return;
      this.rows = [...this.rows, ...page.items];
      this.nextCursor = page.nextCursor ?? null;
      this.error = null;
    } catch (e) {
      if (generation === this.generation) this.error = e;
    } finally {
      if (generation === this.generation) this.loading = false;
    }
  }

  private onFilter = (e: SubmitEvent): void => {
    e.preventDefault();
    const form = new FormData(e.target as HTMLFormElement);
    navigate(
      href.nodes({ health: String(form.get('health') ?? ''), gpuModel: String(form.get('gpuModel') ?? ''), zone: String(form.get('zone') ?? '').trim() }),
    );
  };

  protected override render() {
    const f = this.filter;
    return html`
      <h1>Nodes</h1>
      <form class="filters" role="search" aria-label="Filter nodes" @submit=${this.onFilter}>
        <label
          >Health
          <select name="health">
            <option value="">Any health</option>
            ${HEALTHS.map((h) => html`<option value=${h} ?selected=${h === f.health}>${h}</option>`)}
          </select>
        </label>
        <label
          >GPU model
          <select name="gpuModel">
            <option value="">Any model</option>
            ${this.models.map((m) => html`<option value=${m} ?selected=${m === f.gpuModel}>${m}</option>`)}
            ${f.gpuModel && !this.models.includes(f.gpuModel) ? html`<option value=${f.gpuModel} selected>${f.gpuModel}</option>` : nothing}
          </select>
        </label>
        <label>Zone <input name="zone" type="text" .value=${f.zone ?? ''} autocomplete="off" spellcheck="false" /></label>
        <button type="submit">Apply</button>
      </form>
      ${errorBox(this.error)}
      <div class="table-wrap" tabindex="0" role="region" aria-label="Nodes">
        <table class="nodes-table">
          <caption class="visually-hidden">
            Nodes by id
          </caption>
          <thead>
            <tr>
              <th scope="col">Node</th>
              <th scope="col">Zone / rack</th>
              <th scope="col">Health</th>
              <th scope="col">GPUs used</th>
              <th scope="col" class="num">CPU</th>
              <th scope="col" class="num">Memory</th>
              <th scope="col">Last heard</th>
            </tr>
          </thead>
          <tbody>
            ${this.rows.map(
              (n) =>
                html`<tr data-node-id=${n.id}>
                  <th scope="row"><a href=${href.node(n.id)}>${n.id}</a></th>
                  <td>${n.zone} / ${n.rack}</td>
                  <td>
                    ${badge(n.health)}${n.cordoned ? html` ${badge('CORDONED')}` : nothing}${n.cordonReason === 'START_FAILURES' ? html` ${badge('START_FAILURES')}` : nothing}
                  </td>
                  <td>${n.gpus.total ? `${n.gpus.allocated} / ${n.gpus.total} ${n.gpus.model ?? ''}` : '—'}</td>
                  <td class="num">${n.cpuCores}</td>
                  <td class="num">${mib(n.memoryMiB)}</td>
                  <td>${n.lastHeartbeatAt ? html`<time datetime=${n.lastHeartbeatAt}>${time(n.lastHeartbeatAt)}</time>` : '—'}</td>
                </tr>`,
            )}
          </tbody>
        </table>
      </div>
      <p class="table-foot">
        ${this.loading ? 'Loading…' : html`${count(this.rows.length)} nodes shown${this.nextCursor ? ', more on the next page' : ''}.`}
        ${this.nextCursor && !this.loading ? html`<button type="button" @click=${() => this.load(false)}>Load more</button>` : nothing}
      </p>
    `;
  }
}

customElements.define('gantry-nodes-page', NodesPage);

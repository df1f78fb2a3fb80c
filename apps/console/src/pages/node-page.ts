import { html, nothing } from 'lit';
import type { Node, NodeEvent } from '@gantry/client';
import { DrainStatus, drainStatus } from '../nodes/drain-status';
import { cordonText, declaredText } from '../nodes/node-trust';
import { mib, percent, shortId, time } from '../shell/format';
import { href } from '../shell/router';
import { Poller, badge, errorBox } from '../shell/ui';
import { PageElement } from './page-element';

const REFRESH_MS = 5_000;
const DRAIN_PATH = '/v1/nodes/{id}/drain';

/**
 * One node: capacity, live telemetry, the attempts it runs, cordon and drain (operators: others'
 * job ids are not a user's to see, contract §4.3), its history. A drain (ADR 0027) shows as
 * DRAINING until its deadline, then as DRAINED with the jobs it requeued while the node stays cordoned.
 */
export class NodePage extends PageElement {
  static override properties = {
    nodeId: { attribute: false },
    node: { state: true },
    events: { state: true },
    error: { state: true },
    acting: { state: true },
    actionError: { state: true },
  };
  declare nodeId: string;
  declare node: Node | null;
  declare events: NodeEvent[];
  declare error: unknown;
  declare acting: boolean;
  declare actionError: unknown;
  private poller = new Poller(this, () => this.load(), REFRESH_MS);

  constructor() {
    super();
    this.nodeId = '';
    this.node = null;
    this.events = [];
    this.error = null;
    this.acting = false;
    this.actionError = null;
  }

  private async load(): Promise<void> {
    try {
      const [node, events] = await Promise.all([this.session.client.getNode(this.nodeId), this.session.client.nodeEvents(this.nodeId)]);
      this.node = node;
      this.events = events;
      this.error = null;
    } catch (e) {
      this.error = e;
    }
  }

  private async act(action: () => Promise<unknown>): Promise<void> {
    this.acting = true;
    this.actionError = null;
    try {
      await action();
      await this.poller.now();
    } catch (e) {
      this.actionError = e;
    } finally {
      this.acting = false;
    }
  }

  private toggleCordon = () =>
    this.act(() => (this.node!.cordoned ? this.session.client.uncordonNode(this.nodeId) : this.session.client.cordonNode(this.nodeId)));

  private drain = (e: SubmitEvent) => {
    e.preventDefault();
    const grace = Number(new FormData(e.target as HTMLFormElement).get('grace'));
    return this.act(() => this.session.client.drainNode(this.nodeId, grace));
  };

  private drainFact(d: DrainStatus) {
    if (d.kind === 'draining') {
      return html`<dt>Drain</dt>
        <dd class="drain-status">
          pending: what still runs here is requeued at <time datetime=${d.deadline}>${time(d.deadline)}</time> (an uncordon cancels it)
        </dd>`;
    }
    if (d.kind === 'drained') {
      return html`<dt>Drain</dt>
        <dd class="drain-status">
          done at <time datetime=${d.at}>${time(d.at)}</time>:
          ${
            d.jobIds.length
              ? html`requeued ${d.jobIds.map((id, i) => html`${i ? ', ' : ''}<a href=${href.job(id)}>${shortId(id)}</a>`)}`
              : 'nothing was running'
          };
          the node stays cordoned
        </dd>`;
    }
    return nothing;
  }

  protected override render() {
    const n = this.node;
    if (!n)
      return html`<h1>Node <code>${this.nodeId}</code></h1>
        ${this.error ? errorBox(this.error) : html`<p aria-live="polite">Loading…</p>`}`;
    const t = n.telemetry;
    const drain = drainStatus(n, this.events);
    return html`
      <p class="crumbs"><a href=${href.nodes()}>Nodes</a> / <code>${n.id}</code></p>
      <div class="title-row">
        <h1>
          ${n.id}
          <span class="node-status"
            >${badge(n.health)}${n.cordoned ? html` ${badge('CORDONED')}` : nothing}${n.cordonReason === 'START_FAILURES' ? html` ${badge('START_FAILURES')}` : nothing}${drain.kind !== 'none' ? html` ${badge(drain.kind === 'draining' ? 'DRAINING' : 'DRAINED')}` : nothing}</span
          >
        </h1>
        ${
          this.isOperator
            ? html`<div class="actions">
                <button type="button" ?disabled=${this.acting} @click=${this.toggleCordon}>${n.cordoned ? 'Uncordon' : 'Cordon'}</button>
                ${
                  this.caps?.has('POST', DRAIN_PATH) && drain.kind !== 'draining'
                    ? html`<form class="inline" @submit=${this.drain}>
                        <label>Grace (s) <input name="grace" type="number" min="0" max="86400" value="60" required /></label
                        ><button type="submit" class="danger" ?disabled=${this.acting}>Drain</button>
                      </form>`
                    : nothing
                }
              </div>`
            : nothing
        }
      </div>
      ${errorBox(this.actionError)} ${errorBox(this.error)}
      <div class="cards">
        <section class="card" aria-labelledby="capacity-heading">
          <h2 id="capacity-heading">Capacity</h2>
          <dl class="facts">
            <dt>Zone / rack</dt>
            <dd><a href=${href.nodes({ zone: n.zone })}>${n.zone}</a> / ${n.rack}</dd>
            <dt>GPUs</dt>
            <dd>${n.gpus.total ? `${n.gpus.allocated} of ${n.gpus.total} allocated (${n.gpus.model})` : 'none'}</dd>
            <dt>CPU cores</dt>
            <dd>${n.cpuCores}</dd>
            <dt>Memory</dt>
            <dd>${mib(n.memoryMiB)}</dd>
            <dt>Cordoned</dt>
            <dd class="cordon-status">${n.cordoned ? `yes (${cordonText(n)}): no new work is placed here` : 'no'}</dd>
            <dt>Start failures</dt>
            <dd>${n.startFailures} in a row</dd>
            <dt>Declared</dt>
            <dd class="declared">${declaredText(n)}</dd>
            ${
              n.exceeded.length
                ? html`<dt>Reports beyond</dt>
                    <dd class="exceeded">${n.exceeded.join(', ')}: shown, never believed</dd>`
                : nothing
            }
            ${this.drainFact(drain)}
            <dt>Last heard</dt>
            <dd>
              ${n.lastHeartbeatAt ? html`<time datetime=${n.lastHeartbeatAt}>${time(n.lastHeartbeatAt)}</time>` : 'never (or longer ago than live state is kept)'}
            </dd>
            <dt>First seen</dt>
            <dd><time datetime=${n.firstSeenAt}>${time(n.firstSeenAt)}</time></dd>
          </dl>
        </section>
        <section class="card" aria-labelledby="telemetry-heading">
          <h2 id="telemetry-heading">Telemetry</h2>
          ${
            t
              ? html`<dl class="facts">
                    <dt>CPU use</dt>
                    <dd>${percent(t.cpu?.utilization)}</dd>
                    <dt>Memory used</dt>
                    <dd>${t.memory ? `${mib(t.memory.usedMiB)} of ${mib(t.memory.totalMiB)}` : '—'}</dd>
                    <dt>Sent</dt>
                    <dd>${t.telemetryAt ? html`<time datetime=${t.telemetryAt}>${time(t.telemetryAt)}</time>` : '—'}</dd>
                  </dl>
                  ${
                    t.gpus.length
                      ? html`<table class="compact">
                          <thead>
                            <tr>
                              <th scope="col" class="num">GPU</th>
                              <th scope="col">Model</th>
                              <th scope="col" class="num">Use</th>
                              <th scope="col" class="num">Memory</th>
                              <th scope="col">Healthy</th>
                            </tr>
                          </thead>
                          <tbody>
                            ${t.gpus.map(
                              (g) =>
                                html`<tr>
                                  <td class="num">${g.index}</td>
                                  <td>${g.model}</td>
                                  <td class="num">${percent(g.utilization)}</td>
                                  <td class="num">${mib(g.memoryUsedMiB)} / ${mib(g.memoryMiB)}</td>
                                  <td>${g.healthy ? 'yes' : 'no'}</td>
                                </tr>`,
                            )}
                          </tbody>
                        </table>`
                      : nothing
                  }`
              : html`<p class="muted">No telemetry received (or older than live state is kept).</p>`
          }
        </section>
        ${
          this.isOperator
            ? html`<section class="card" aria-labelledby="running-heading">
                <h2 id="running-heading">Running attempts</h2>
                ${
                  t?.running?.length
                    ? html`<ul class="plain">
                        ${(t.running ?? []).map((r) => html`<li><a href=${href.job(r.jobId)}>${shortId(r.jobId)}</a> attempt ${r.attempt}</li>`)}
                      </ul>`
                    : html`<p class="muted">None.</p>`
                }
              </section>`
            : nothing
        }
      </div>
      <section class="panel" aria-labelledby="node-events-heading">
        <h2 id="node-events-heading">Events</h2>
        ${
          this.events.length
            ? html`<ol class="timeline">
                ${[...this.events].reverse().map(
                  (e) =>
                    html`<li data-type=${e.type}>
                      <time datetime=${e.at}>${time(e.at)}</time> <strong>${e.type}</strong>
                      ${e.fromHealth || e.toHealth ? html`<span>${e.fromHealth ?? ''} → ${e.toHealth ?? ''}</span>` : nothing}
                      ${e.reason ? html`<span class="muted">${e.reason}</span>` : nothing}
                      ${e.jobIds?.length ? html`<span class="muted">jobs ${e.jobIds.map((id, i) => html`${i ? ', ' : ''}<a href=${href.job(id)}>${shortId(id)}</a>`)}</span>` : nothing}
                    </li>`,
                )}
              </ol>`
            : html`<p class="muted">No events: nothing has happened to this node since it registered.</p>`
        }
      </section>
    `;
  }
}

customElements.define('gantry-node-page', NodePage);

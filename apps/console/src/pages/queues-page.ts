import { html, nothing } from 'lit';
import type { Queue } from '@gantry/client';
import { count } from '../shell/format';
import { href } from '../shell/router';
import { Poller, errorBox } from '../shell/ui';
import { PageElement } from './page-element';

const REFRESH_MS = 5_000;

/** "" -> null (no quota); anything else a whole number of GPUs. */
function quotaOf(raw: FormDataEntryValue | null): number | null {
  const s = String(raw ?? '').trim();
  return s === '' ? null : Number(s);
}

/** Slurm's fair-share factor and the share it is measured against (ADR 0038). */
const fairShareText = (q: Queue) => (q.fairShare ? `${q.fairShare.factor.toFixed(2)} (share ${Math.round(q.fairShare.share * 100)} %)` : '—');

/** Queues with their band, weight, quota, usage and fair share; operators create and edit them. */
export class QueuesPage extends PageElement {
  static override properties = {
    queues: { state: true },
    error: { state: true },
    editing: { state: true },
    formError: { state: true },
    saved: { state: true },
  };
  declare queues: Queue[] | null;
  declare error: unknown;
  declare editing: string | null;
  declare formError: unknown;
  declare saved: string | null;
  private poller = new Poller(
    this,
    async () => {
      try {
        this.queues = await this.session.client.listQueues();
        this.error = null;
      } catch (e) {
        this.error = e;
      }
    },
    REFRESH_MS,
  );

  constructor() {
    super();
    this.queues = null;
    this.error = null;
    this.editing = null;
    this.formError = null;
    this.saved = null;
  }

  private create = async (e: SubmitEvent): Promise<void> => {
    e.preventDefault();
    const formEl = e.target as HTMLFormElement;
    const f = new FormData(formEl);
    this.formError = null;
    try {
      const name = String(f.get('name')).trim();
      await this.session.client.createQueue(name, Number(f.get('priority')), quotaOf(f.get('quota')), { weight: Number(f.get('weight')) });
      formEl.reset();
      this.saved = `Queue ${name} created.`;
      await this.poller.now();
    } catch (err) {
      this.formError = err;
    }
  };

  private save = async (e: SubmitEvent, name: string): Promise<void> => {
    e.preventDefault();
    const f = new FormData(e.target as HTMLFormElement);
    this.formError = null;
    try {
      await this.session.client.updateQueue(name, {
        priority: Number(f.get('priority')),
        weight: Number(f.get('weight')),
        quota: { gpus: quotaOf(f.get('quota')) },
      });
      this.editing = null;
      this.saved = `Queue ${name} saved.`;
      await this.poller.now();
    } catch (err) {
      this.formError = err;
    }
  };

  protected override render() {
    return html`
      <h1>Queues</h1>
      ${errorBox(this.error)} ${this.saved ? html`<p class="ok" role="status">${this.saved}</p>` : nothing} ${this.editing ? errorBox(this.formError) : nothing}
      <div class="table-wrap" tabindex="0" role="region" aria-label="Queues">
        <table class="queues-table">
          <caption class="visually-hidden">
            Queues, highest priority band first
          </caption>
          <thead>
            <tr>
              <th scope="col">Queue</th>
              <th scope="col" class="num">Priority</th>
              <th scope="col" class="num">Weight</th>
              <th scope="col" class="num">GPU quota</th>
              <th scope="col">GPUs held</th>
              <th scope="col" class="num">Queued</th>
              <th scope="col" class="num">Running</th>
              <th scope="col" class="num" title="Fair-share factor: 1 unused, 0.5 used exactly its share of its band, lower past it">Fair share</th>
              ${this.isOperator ? html`<th scope="col"><span class="visually-hidden">Actions</span></th>` : nothing}
            </tr>
          </thead>
          <tbody>
            ${(this.queues ?? []).map((q) => (this.editing === q.name ? this.editRow(q) : this.row(q)))}
          </tbody>
        </table>
      </div>
      ${this.isOperator ? this.createForm() : nothing}
    `;
  }

  private row(q: Queue) {
    const quota = q.quota.gpus;
    return html`<tr data-queue=${q.name}>
      <th scope="row"><a href=${href.jobs({ queue: q.name })}>${q.name}</a></th>
      <td class="num">${q.priority}</td>
      <td class="num">${q.weight}</td>
      <td class="num">${quota === null ? 'none' : count(quota)}</td>
      <td>
        ${quota === null ? count(q.usage.gpusHeld) : html`<meter min="0" max=${Math.max(1, quota)} high=${Math.max(1, quota) * 0.9} value=${q.usage.gpusHeld} aria-label=${`${q.name}: ${q.usage.gpusHeld} of ${quota} GPUs held`}></meter> ${count(q.usage.gpusHeld)} / ${count(quota)}`}
      </td>
      <td class="num">${count(q.usage.jobsQueued)}</td>
      <td class="num">${count(q.usage.jobsRunning)}</td>
      <td class="num">${fairShareText(q)}</td>
      ${this.isOperator ? html`<td><button type="button" aria-label=${`Edit queue ${q.name}`} @click=${() => ((this.editing = q.name), (this.formError = null), (this.saved = null))}>Edit</button></td>` : nothing}
    </tr>`;
  }

  private editRow(q: Queue) {
    const form = `edit-${q.name}`;
    return html`<tr data-queue=${q.name} class="editing">
      <th scope="row">
        ${q.name}
        <form id=${form} @submit=${(e: SubmitEvent) => this.save(e, q.name)}></form>
      </th>
      <td>
        <input form=${form} name="priority" type="number" min="0" max="100" required .value=${String(q.priority)} aria-label=${`Priority of ${q.name}`} />
      </td>
      <td>
        <input
          form=${form}
          name="weight"
          type="number"
          min="0.001"
          max="1000"
          step="any"
          required
          .value=${String(q.weight)}
          aria-label=${`Weight of ${q.name}`}
        />
      </td>
      <td>
        <input
          form=${form}
          name="quota"
          type="number"
          min="0"
          step="1"
          .value=${q.quota.gpus === null ? '' : String(q.quota.gpus)}
          placeholder="none"
          aria-label=${`GPU quota of ${q.name} (empty: none)`}
        />
      </td>
      <td>${count(q.usage.gpusHeld)}</td>
      <td class="num">${count(q.usage.jobsQueued)}</td>
      <td class="num">${count(q.usage.jobsRunning)}</td>
      <td class="num">${fairShareText(q)}</td>
      <td class="row-actions"><button form=${form} type="submit">Save</button> <button type="button" @click=${() => (this.editing = null)}>Cancel</button></td>
    </tr>`;
  }

  private createForm() {
    return html`<section class="panel" aria-labelledby="new-queue-heading">
      <h2 id="new-queue-heading">New queue</h2>
      ${this.editing ? nothing : errorBox(this.formError)}
      <form class="filters" @submit=${this.create}>
        <label
          >Name
          <input
            name="name"
            type="text"
            required
            pattern="[a-z0-9]([a-z0-9\\-]{0,61}[a-z0-9])?"
            title="lower-case letters, digits and -, up to 63, not starting or ending with -"
            autocomplete="off"
            spellcheck="false"
        /></label>
        <label>Priority <input name="priority" type="number" min="0" max="100" value="0" required /></label>
        <label>Weight <input name="weight" type="number" min="0.001" max="1000" step="any" value="1" required /></label>
        <label>GPU quota <input name="quota" type="number" min="0" step="1" placeholder="none" /></label>
        <button type="submit">Create queue</button>
      </form>
    </section>`;
  }
}

customElements.define('gantry-queues-page', QueuesPage);

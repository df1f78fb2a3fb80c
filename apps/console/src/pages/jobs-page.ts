import { html, nothing } from 'lit';
import type { Job, JobState, JobStreamEvent, Queue } from '@gantry/client';
import { JobFilter, applyEvent, insertJob } from '../jobs/jobs-table-model';
import { count, shortId, time } from '../shell/format';
import { href, navigate } from '../shell/router';
import { badge, errorBox } from '../shell/ui';
import { ListPage } from './list-page';

const STATES: JobState[] = ['QUEUED', 'SCHEDULED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED'];
const PAGE = 50;

/**
 * Jobs, filtered by queue, state and (operators) owner, in the API's order (oldest first), paged
 * with the cursor. Live: the stream of every visible job's events is opened first, the listing is
 * read once it is open, and each event then moves its row (or brings a new job in), so nothing
 * that happens between the two is lost (jobs-table-model).
 */
export class JobsPage extends ListPage<Job> {
  static override properties = { queues: { state: true }, live: { state: true }, beyond: { state: true } };
  declare queues: Queue[];
  declare live: 'connecting' | 'on' | 'off';
  /** New jobs that belong after the rows listed so far (the next pages hold them). */
  declare beyond: number;
  private abort: AbortController | null = null;

  constructor() {
    super();
    this.queues = [];
    this.live = 'connecting';
    this.beyond = 0;
  }

  get filter(): JobFilter {
    const q = this.query;
    return {
      queue: q.get('queue') || undefined,
      state: (STATES.includes(q.get('state') as JobState) ? q.get('state') : undefined) as JobState | undefined,
      owner: this.isOperator ? q.get('owner') || undefined : undefined,
    };
  }

  override connectedCallback(): void {
    super.connectedCallback();
    void this.session.client.listQueues().then(
      (q) => (this.queues = q),
      () => undefined,
    );
    this.restart();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.abort?.abort();
  }

  protected override willUpdate(changed: Map<string, unknown>): void {
    if (changed.has('query') && changed.get('query') !== undefined) this.restart();
  }

  /** Opens the stream, then lists once it is open; events that arrive before the listing wait for it. */
  private restart(): void {
    this.abort?.abort();
    const abort = (this.abort = new AbortController());
    const filter = this.filter;
    this.rows = [];
    this.nextCursor = null;
    this.beyond = 0;
    this.loading = true;
    this.error = null;
    this.live = 'connecting';
    const pending: JobStreamEvent[] = [];
    let listed = false;
    let opened!: () => void;
    const open = new Promise<void>((resolve) => (opened = resolve));
    void (async () => {
      try {
        for await (const e of this.session.client.followEvents({ queue: filter.queue, signal: abort.signal, onOpen: () => ((this.live = 'on'), opened()) })) {
          if (abort.signal.aborted) return;
          if (listed) this.onEvent(e, filter, abort.signal);
          else pending.push(e);
        }
      } catch {
        // Not followable now (a 503 past the gateway's stream limit, a dropped network): list anyway, poll by hand.
      } finally {
        if (!abort.signal.aborted) this.live = 'off';
        opened();
      }
    })();
    void (async () => {
      // A stream that cannot open does not keep the table empty for long.
      await Promise.race([open, new Promise((r) => setTimeout(r, 3_000))]);
      if (abort.signal.aborted) return;
      await this.loadPage(filter, undefined, abort.signal);
      listed = true;
      for (const e of pending.splice(0)) this.onEvent(e, filter, abort.signal);
    })();
  }

  private async loadPage(filter: JobFilter, cursor: string | undefined, signal: AbortSignal): Promise<void> {
    this.loading = true;
    try {
      const page = await this.session.client.listJobs({ ...filter, limit: PAGE, cursor });
      if (signal.aborted) return;
      const seen = new Set(this.rows.map((r) => r.id));
      this.rows = [...this.rows, ...page.items.filter((j) => !seen.has(j.id))];
      this.nextCursor = page.nextCursor ?? null;
      if (!this.nextCursor) this.beyond = 0;
      this.error = null;
    } catch (e) {
      if (!signal.aborted) this.error = e;
    } finally {
      if (!signal.aborted) this.loading = false;
    }
  }

  private onEvent(e: JobStreamEvent, filter: JobFilter, signal: AbortSignal): void {
    const out = applyEvent(this.rows, e, filter);
    this.rows = out.rows;
    if (!out.fetch) return;
    void this.session.client.getJob(out.fetch).then(
      (job) => {
        if (signal.aborted) return;
        const placed = insertJob(this.rows, job, filter, this.nextCursor === null);
        if (placed) this.rows = placed;
        else if (this.nextCursor !== null && insertJob([], job, filter, true)) this.beyond++;
      },
      () => undefined,
    );
  }

  private onFilter = (e: SubmitEvent): void => {
    e.preventDefault();
    const form = new FormData(e.target as HTMLFormElement);
    navigate(href.jobs({ queue: String(form.get('queue') ?? ''), state: String(form.get('state') ?? ''), owner: String(form.get('owner') ?? '') }));
  };

  protected override render() {
    const f = this.filter;
    const liveText = { connecting: 'Connecting to live updates…', on: 'Live: rows change as jobs do', off: 'Live updates are off: reload to refresh' }[
      this.live
    ];
    return html`
      <h1>Jobs</h1>
      <form class="filters" role="search" aria-label="Filter jobs" @submit=${this.onFilter}>
        <label
          >Queue
          <select name="queue">
            <option value="">Any queue</option>
            ${this.queues.map((q) => html`<option value=${q.name} ?selected=${q.name === f.queue}>${q.name}</option>`)}
            ${f.queue && !this.queues.some((q) => q.name === f.queue) ? html`<option value=${f.queue} selected>${f.queue}</option>` : nothing}
          </select>
        </label>
        <label
          >State
          <select name="state">
            <option value="">Any state</option>
            ${STATES.map((s) => html`<option value=${s} ?selected=${s === f.state}>${s}</option>`)}
          </select>
        </label>
        ${this.isOperator ? html`<label>Owner <input name="owner" type="text" .value=${f.owner ?? ''} autocomplete="off" spellcheck="false" /></label>` : nothing}
        <button type="submit">Apply</button>
      </form>
      <p class="live live-${this.live}" role="status">${liveText}</p>
      ${errorBox(this.error)}
      <div class="table-wrap" tabindex="0" role="region" aria-label="Jobs">
        <table class="jobs-table">
          <caption class="visually-hidden">
            Jobs, oldest first
          </caption>
          <thead>
            <tr>
              <th scope="col">Job</th>
              <th scope="col">Owner</th>
              <th scope="col">Queue</th>
              <th scope="col">State</th>
              <th scope="col" class="num">Attempt</th>
              <th scope="col" class="num">GPUs</th>
              <th scope="col">Created</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            ${this.rows.map(
              (j) =>
                html`<tr data-job-id=${j.id}>
                  <th scope="row"><a href=${href.job(j.id)}>${j.name}</a> <code class="muted">${shortId(j.id)}</code></th>
                  <td>${j.owner}</td>
                  <td>${j.queue}</td>
                  <td class="state">
                    ${badge(j.state)}${j.cancelRequested && !['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(j.state) ? html` <span class="muted">cancelling</span>` : nothing}
                  </td>
                  <td class="num">${j.attempt}</td>
                  <td class="num">${j.resources.gpus * j.nodes}</td>
                  <td><time datetime=${j.createdAt}>${time(j.createdAt)}</time></td>
                  <td><time datetime=${j.updatedAt}>${time(j.updatedAt)}</time></td>
                </tr>`,
            )}
          </tbody>
        </table>
      </div>
      <p class="table-foot">
        ${this.loading ? 'Loading…' : html`${count(this.rows.length)} ${this.rows.length === 1 ? 'job' : 'jobs'} shown${this.nextCursor ? ', more on the next page' : ''}.`}
        ${this.beyond > 0 ? html` ${count(this.beyond)} new since, after these.` : nothing}
        ${this.nextCursor && !this.loading ? html`<button type="button" @click=${() => this.loadPage(f, this.nextCursor!, this.abort!.signal)}>Load more</button>` : nothing}
      </p>
    `;
  }
}

customElements.define('gantry-jobs-page', JobsPage);

import { html, nothing } from 'lit';
import { GantryApiError, type Job, type JobEvent, type JobExplanation } from '@gantry/client';
import { TERMINAL_STATES } from '../jobs/jobs-table-model';
import { count, duration, mib, pendingReasonText, shortId, time } from '../shell/format';
import { href } from '../shell/router';
import { badge, errorBox, errorText } from '../shell/ui';
import { PageElement } from './page-element';

/** Contract §4.4 adds these to the job (issue 14); shown where the gateway sends them. */
interface Placement {
  rank: number;
  nodeId: string;
  gpuIndices: number[];
}
type JobWithPlacements = Job & { placements?: Placement[] };

/** The most log text kept on the page: a chatty job must not fill the browser's memory. */
const LOG_MAX_CHARS = 256 * 1024;
const LOGS_PATH = '/v1/jobs/{id}/logs';
const EXPLAIN_PATH = '/v1/jobs/{id}/explain';

/** One job: its spec and state, placements, events as they happen, logs as they are written, and cancel. */
export class JobPage extends PageElement {
  static override properties = {
    jobId: { attribute: false },
    job: { state: true },
    events: { state: true },
    error: { state: true },
    streamEnded: { state: true },
    logs: { state: true },
    logsNote: { state: true },
    cancelling: { state: true },
    actionError: { state: true },
    explanation: { state: true },
  };
  declare jobId: string;
  declare job: JobWithPlacements | null;
  declare events: JobEvent[];
  declare error: unknown;
  declare streamEnded: boolean;
  declare logs: string;
  declare logsNote: string | null;
  declare cancelling: boolean;
  declare actionError: unknown;
  declare explanation: JobExplanation | null;
  private abort = new AbortController();
  private logsStarted = false;

  constructor() {
    super();
    this.jobId = '';
    this.job = null;
    this.events = [];
    this.error = null;
    this.streamEnded = false;
    this.logs = '';
    this.logsNote = null;
    this.cancelling = false;
    this.actionError = null;
    this.explanation = null;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    this.abort = new AbortController();
    void this.load();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.abort.abort();
  }

  protected override updated(changed: Map<string, unknown>): void {
    // A job not yet placed has no log: following starts once it has an attempt.
    if ((changed.has('caps') || changed.has('job')) && this.job && !this.logsStarted) this.followLogs();
    // The capabilities (the OpenAPI document) may arrive after the first read: a queued job, which
    // may see no event for a long time, is explained when they do, not at its next event.
    if (changed.has('caps') && this.caps && this.job?.state === 'QUEUED' && !this.explanation) void this.refresh().catch(() => undefined);
  }

  private async refresh(): Promise<void> {
    this.job = await this.session.client.getJob(this.jobId);
    if (this.job.state === 'QUEUED' && this.caps?.has('GET', EXPLAIN_PATH)) {
      // Placed since the read: 409, nothing to explain.
      const r = await this.session.client.request<JobExplanation>('GET', `/v1/jobs/${encodeURIComponent(this.jobId)}/explain`);
      this.explanation = r.status === 200 ? r.body : null;
    } else this.explanation = null;
  }

  private async load(): Promise<void> {
    const signal = this.abort.signal;
    try {
      await this.refresh();
    } catch (e) {
      this.error = e;
      return;
    }
    this.followLogs();
    try {
      // From seq 1: the whole history, then each event as it happens, until the job's end.
      for await (const e of this.session.client.followJobEvents(this.jobId, { signal })) {
        if (!this.events.some((x) => x.seq === e.seq)) this.events = [...this.events, e];
        if (e.type !== 'CREATED') await this.refresh().catch(() => undefined);
      }
      if (!signal.aborted) this.streamEnded = true;
    } catch (e) {
      if (!signal.aborted) this.error = e;
    }
  }

  /** Follows the latest attempt's log (text/plain, contract §4.4), where the gateway serves logs. */
  private followLogs(): void {
    if (!this.caps || !this.job || this.logsStarted) return;
    if (!this.caps.has('GET', LOGS_PATH)) {
      this.logsStarted = true;
      this.logsNote = `This gateway does not serve job logs yet (its API has no GET ${LOGS_PATH}).`;
      return;
    }
    if (this.job.attempt === 0) {
      this.logsNote = 'No output yet: the job has not started.';
      return;
    }
    this.logsStarted = true;
    void (async () => {
      const signal = this.abort.signal;
      try {
        this.logsNote = 'Following the log…';
        for await (const chunk of this.session.client.jobLogs(this.jobId, { follow: 'true' }, signal)) {
          const text = this.logs + chunk;
          this.logs = text.length > LOG_MAX_CHARS ? text.slice(text.length - LOG_MAX_CHARS) : text;
        }
        this.logsNote = 'The log is complete.';
      } catch (e) {
        if (signal.aborted) return;
        this.logsNote = e instanceof GantryApiError && e.status === 404 ? `No log for this job: ${errorText(e)}` : `The log could not be read: ${errorText(e)}`;
      }
    })();
  }

  private cancel = async (): Promise<void> => {
    this.cancelling = true;
    this.actionError = null;
    try {
      this.job = await this.session.client.cancelJob(this.jobId);
    } catch (e) {
      this.actionError = e;
    } finally {
      this.cancelling = false;
    }
  };

  protected override render() {
    const j = this.job;
    if (!j) {
      return html`<h1>Job <code>${this.jobId}</code></h1>
        ${this.error ? errorBox(this.error) : html`<p aria-live="polite">Loading…</p>`}`;
    }
    const terminal = TERMINAL_STATES.includes(j.state);
    const reason = pendingReasonText(j.pendingReason);
    return html`
      <p class="crumbs"><a href=${href.jobs()}>Jobs</a> / <code>${j.id}</code></p>
      <div class="title-row">
        <h1>${j.name} <span class="job-state">${badge(j.state)}</span></h1>
        ${
          terminal
            ? nothing
            : html`<button type="button" class="danger" ?disabled=${this.cancelling || j.cancelRequested} @click=${this.cancel}>
                ${j.cancelRequested ? 'Cancel requested' : this.cancelling ? 'Cancelling…' : 'Cancel job'}
              </button>`
        }
      </div>
      ${errorBox(this.actionError)} ${errorBox(this.error)}
      ${
        j.state === 'QUEUED' && j.pendingReason
          ? html`<section class="notice" aria-labelledby="pending-heading">
              <h2 id="pending-heading">Why it is waiting</h2>
              <p><code>${j.pendingReason}</code>${reason ? html`: ${reason}` : nothing}</p>
              ${this.explanationView()}
            </section>`
          : nothing
      }
      <div class="cards">
        <section class="card" aria-labelledby="spec-heading">
          <h2 id="spec-heading">Job</h2>
          <dl class="facts">
            <dt>Owner</dt>
            <dd>${j.owner}</dd>
            <dt>Queue</dt>
            <dd><a href=${href.jobs({ queue: j.queue })}>${j.queue}</a></dd>
            <dt>Image</dt>
            <dd><code>${j.image}</code></dd>
            <dt>Command</dt>
            <dd><code>${j.command.join(' ')}</code></dd>
            <dt>Per node</dt>
            <dd>
              ${j.resources.gpus} GPU${j.resources.gpus === 1 ? '' : 's'}${j.resources.gpuModel ? ` (${j.resources.gpuModel})` : ''}, ${j.resources.cpuCores}
              CPU, ${mib(j.resources.memoryMiB)}
            </dd>
            <dt>Nodes</dt>
            <dd>${j.nodes}${j.nodes > 1 ? ' (gang)' : ''}</dd>
            <dt>Retries allowed</dt>
            <dd>
              ${
                j.retryPolicy
                  ? html`${j.retryPolicy.maxRetries}
                    (${j.retryPolicy.retryOnExitCodes.length ? `exit codes ${j.retryPolicy.retryOnExitCodes.join(', ')}` : 'lost attempts only'}; backoff
                    ${j.retryPolicy.backoffSeconds} s up to ${j.retryPolicy.maxBackoffSeconds} s)`
                  : j.maxRetries
              }
            </dd>
            ${
              j.maxRuntimeSeconds
                ? html`<dt>Max runtime</dt>
                    <dd>${duration(j.maxRuntimeSeconds * 1000)}</dd>`
                : nothing
            }
            ${
              j.dependsOn?.length
                ? html`<dt>Depends on</dt>
                    <dd>${j.dependsOn.map((d, i) => html`${i ? ', ' : ''}<a href=${href.job(d.jobId)}>${shortId(d.jobId)}</a> (${d.condition})`)}</dd>`
                : nothing
            }
          </dl>
        </section>
        <section class="card" aria-labelledby="run-heading">
          <h2 id="run-heading">Run</h2>
          <dl class="facts">
            <dt>State</dt>
            <dd>${j.state}${j.cancelRequested && !terminal ? ' (cancel requested)' : ''}</dd>
            <dt>Attempt</dt>
            <dd>${j.attempt}</dd>
            <dt>Created</dt>
            <dd><time datetime=${j.createdAt}>${time(j.createdAt)}</time></dd>
            <dt>Started</dt>
            <dd>${j.startedAt ? html`<time datetime=${j.startedAt}>${time(j.startedAt)}</time>` : '—'}</dd>
            <dt>Finished</dt>
            <dd>
              ${j.finishedAt ? html`<time datetime=${j.finishedAt}>${time(j.finishedAt)}</time>` : '—'}${j.startedAt && j.finishedAt ? ` (ran ${duration(Date.parse(j.finishedAt) - Date.parse(j.startedAt))})` : ''}
            </dd>
            <dt>Exit code</dt>
            <dd>${j.exitCode ?? '—'}</dd>
            <dt>Reason</dt>
            <dd>${j.reason ?? '—'}</dd>
          </dl>
        </section>
        ${this.placementsView(j)}
      </div>
      <section class="panel" aria-labelledby="events-heading">
        <h2 id="events-heading">Events</h2>
        <ol class="timeline" aria-live="polite">
          ${this.events.map(
            (e) =>
              html`<li data-type=${e.type}>
                <time datetime=${e.at}>${time(e.at)}</time>
                <span class="seq">#${e.seq}</span>
                <strong>${e.type}</strong>
                ${e.fromState || e.toState ? html`<span>${e.fromState ?? ''}${e.fromState ? ' → ' : ''}${e.toState ?? ''}</span>` : nothing}
                ${e.attempt ? html`<span class="muted">attempt ${e.attempt}</span>` : nothing}
                ${e.nodeIds?.length ? html`<span class="muted">on ${e.nodeIds.map((n, i) => html`${i ? ', ' : ''}<a href=${href.node(n)}>${n}</a>`)}</span>` : nothing}
                ${e.reason ? html`<span class="muted">${e.reason}</span>` : nothing}
              </li>`,
          )}
        </ol>
        <p class="muted">${this.streamEnded ? 'The job has ended; its history is complete.' : 'Following: new events appear as they happen.'}</p>
      </section>
      <section class="panel" aria-labelledby="logs-heading">
        <h2 id="logs-heading">Logs</h2>
        ${this.logsNote ? html`<p class="muted logs-note" role="status">${this.logsNote}</p>` : nothing}
        ${this.logs ? html`<pre class="logs" tabindex="0" aria-label="Log output">${this.logs}</pre>` : nothing}
      </section>
    `;
  }

  private placementsView(j: JobWithPlacements) {
    if (j.placements?.length) {
      return html`<section class="card" aria-labelledby="placements-heading">
        <h2 id="placements-heading">Placements</h2>
        <table class="compact placements">
          <thead>
            <tr>
              <th scope="col" class="num">Rank</th>
              <th scope="col">Node</th>
              <th scope="col">GPUs</th>
            </tr>
          </thead>
          <tbody>
            ${j.placements.map(
              (p) =>
                html`<tr>
                  <td class="num">${p.rank}</td>
                  <td><a href=${href.node(p.nodeId)}>${p.nodeId}</a></td>
                  <td>${p.gpuIndices.length ? p.gpuIndices.join(', ') : '—'}</td>
                </tr>`,
            )}
          </tbody>
        </table>
      </section>`;
    }
    if (!j.nodeIds.length) return nothing;
    return html`<section class="card" aria-labelledby="placements-heading">
      <h2 id="placements-heading">Placements</h2>
      <table class="compact placements">
        <thead>
          <tr>
            <th scope="col" class="num">Rank</th>
            <th scope="col">Node</th>
          </tr>
        </thead>
        <tbody>
          ${j.nodeIds.map(
            (n, rank) =>
              html`<tr>
                <td class="num">${rank}</td>
                <td><a href=${href.node(n)}>${n}</a></td>
              </tr>`,
          )}
        </tbody>
      </table>
      <p class="muted">Attempt ${j.attempt}, ${count(j.nodeIds.length)} node${j.nodeIds.length === 1 ? '' : 's'}.</p>
    </section>`;
  }

  /** GET /v1/jobs/{id}/explain (contract §4.7): every blocker with what it lacks, single changes that would let it start, when it may. */
  private explanationView() {
    const x = this.explanation;
    if (!x) return nothing;
    const lacks = (d: JobExplanation['blockers'][number]['deficit']) =>
      [d.gpus ? `${d.gpus} GPU${d.gpus === 1 ? '' : 's'}` : '', d.cpuCores ? `${d.cpuCores} CPU` : '', d.memoryMiB ? mib(d.memoryMiB) : '']
        .filter(Boolean)
        .join(', ');
    return html`<div class="explanation">
      <p>Position: ${x.position.queue} in its queue, ${x.position.overall} overall.</p>
      <p>
        Estimated start:
        ${
          x.estimatedStartAt
            ? html`<time datetime=${x.estimatedStartAt}>${time(x.estimatedStartAt)}</time> <span class="muted">(from running attempts' max runtimes)</span>`
            : html`<span class="muted">unknown: what blocks it has no max runtime, or no end would lift it</span>`
        }
      </p>
      ${
        x.blockers.length
          ? html`<h3>Blockers</h3>
              <ul class="blockers">
                ${x.blockers.map((b) => html`<li data-reason=${b.reason}><code>${b.reason}</code>: ${b.detail}${lacks(b.deficit) ? html` <span class="deficit">(lacks ${lacks(b.deficit)})</span>` : nothing}</li>`)}
              </ul>`
          : html`<p>Nothing blocks it: the next scheduling cycle places it.</p>`
      }
      ${
        x.wouldStartWith.length
          ? html`<h3>It would start now with</h3>
              <ul class="would-start">
                ${x.wouldStartWith.map((w) => html`<li><code>${w.change}</code>: ${w.detail}</li>`)}
              </ul>`
          : nothing
      }
    </div>`;
  }
}

customElements.define('gantry-job-page', JobPage);

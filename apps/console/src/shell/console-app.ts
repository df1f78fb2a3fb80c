import { html, nothing } from 'lit';
import { keyed } from 'lit/directives/keyed.js';
import '../pages/sign-in-page';
import '../pages/overview-page';
import '../pages/jobs-page';
import '../pages/job-page';
import '../pages/nodes-page';
import '../pages/node-page';
import '../pages/queues-page';
import '../pages/usage-page';
import { Capabilities } from './capabilities';
import { LightElement } from './light-element';
import { BASE, Route, href, navigate, parseRoute } from './router';
import { Session, confirmSession, signIn, signOut, storedSession, storedToken } from './session';

const NAV: Array<{ page: Route['page']; label: string; to: () => string }> = [
  { page: 'overview', label: 'Overview', to: href.overview },
  { page: 'jobs', label: 'Jobs', to: () => href.jobs() },
  { page: 'nodes', label: 'Nodes', to: () => href.nodes() },
  { page: 'queues', label: 'Queues', to: href.queues },
  { page: 'usage', label: 'Usage', to: href.usage },
];

const TITLES: Record<Route['page'], string> = {
  overview: 'Overview',
  jobs: 'Jobs',
  job: 'Job',
  nodes: 'Nodes',
  node: 'Node',
  queues: 'Queues',
  usage: 'Usage',
  'not-found': 'Not found',
};

/**
 * The console: sign-in, then a header with the sections and the page of the current URL. Links
 * under /ui/ move without reloading (history API); the gateway answers any /ui/* URL with the
 * console, so every page can be bookmarked and reloaded.
 */
export class ConsoleApp extends LightElement {
  static override properties = { session: { state: true }, route: { state: true }, caps: { state: true }, restoring: { state: true } };
  declare session: Session | null;
  declare route: Route;
  declare caps: Capabilities | null;
  declare restoring: boolean;

  constructor() {
    super();
    this.session = null;
    this.route = parseRoute(location.pathname, location.search);
    this.caps = null;
    this.restoring = storedToken() !== null;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    window.addEventListener('popstate', this.onLocation);
    window.addEventListener('gantry:navigate', this.onLocation);
    this.addEventListener('click', this.onClick);
    this.addEventListener('gantry:signed-in', this.onSignedIn as EventListener);
    void Capabilities.load().then((c) => (this.caps = c));
    const stored = storedSession();
    if (stored) {
      this.session = stored;
      this.restoring = false;
      void confirmSession(stored).then((ok) => {
        if (!ok && this.session === stored) this.signOut();
      });
    } else {
      const token = storedToken();
      if (token) {
        signIn(token).then(
          (s) => ((this.session = s), (this.restoring = false)),
          () => (signOut(), (this.restoring = false)),
        );
      }
    }
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    window.removeEventListener('popstate', this.onLocation);
    window.removeEventListener('gantry:navigate', this.onLocation);
  }

  private onLocation = (): void => {
    this.route = parseRoute(location.pathname, location.search);
    window.scrollTo(0, 0);
    // Focus follows the page change, so a screen reader announces the new page.
    void this.updateComplete.then(() =>
      requestAnimationFrame(() => {
        const h1 = this.querySelector<HTMLElement>('main h1');
        h1?.setAttribute('tabindex', '-1');
        h1?.focus({ preventScroll: true });
      }),
    );
  };

  private onSignedIn = (e: CustomEvent<Session>): void => {
    this.session = e.detail;
  };

  /** Same-origin links under /ui/ navigate in place (plain clicks only: new tabs work as usual). */
  private onClick = (e: MouseEvent): void => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const a = (e.target as Element).closest('a');
    if (!a || a.target || a.hasAttribute('download') || a.origin !== location.origin || !a.pathname.startsWith(BASE)) return;
    e.preventDefault();
    navigate(a.pathname + a.search);
  };

  private signOut = (): void => {
    signOut();
    this.session = null;
    navigate(href.overview(), true);
  };

  protected override willUpdate(): void {
    document.title = this.session ? `${TITLES[this.route.page]} · Gantry` : 'Sign in · Gantry';
  }

  protected override render() {
    const s = this.session;
    const current = this.route.page === 'job' ? 'jobs' : this.route.page === 'node' ? 'nodes' : this.route.page;
    return html`
      <a class="skip-link" href="#main">Skip to content</a>
      <header class="top">
        <a class="brand" href=${href.overview()}>Gantry</a>
        ${
          s
            ? html`<nav aria-label="Sections">
                  <ul>
                    ${NAV.map((n) => html`<li><a href=${n.to()} aria-current=${n.page === current ? 'page' : nothing}>${n.label}</a></li>`)}
                  </ul>
                </nav>
                <div class="who">
                  <span>${s.owner} <span class="muted">(${s.role})</span></span>
                  <button type="button" @click=${this.signOut}>Sign out</button>
                </div>`
            : nothing
        }
      </header>
      <main id="main" tabindex="-1">${this.page()}</main>
    `;
  }

  private page() {
    const s = this.session;
    if (!s) return this.restoring ? html`<p aria-live="polite">Signing in…</p>` : html`<gantry-sign-in-page></gantry-sign-in-page>`;
    const r = this.route;
    switch (r.page) {
      case 'overview':
        return html`<gantry-overview-page .session=${s} .caps=${this.caps}></gantry-overview-page>`;
      case 'jobs':
        return html`<gantry-jobs-page .session=${s} .caps=${this.caps} .query=${r.query}></gantry-jobs-page>`;
      case 'job':
        return keyed(r.id, html`<gantry-job-page .session=${s} .caps=${this.caps} .jobId=${r.id}></gantry-job-page>`);
      case 'nodes':
        return html`<gantry-nodes-page .session=${s} .caps=${this.caps} .query=${r.query}></gantry-nodes-page>`;
      case 'node':
        return keyed(r.id, html`<gantry-node-page .session=${s} .caps=${this.caps} .nodeId=${r.id}></gantry-node-page>`);
      case 'queues':
        return html`<gantry-queues-page .session=${s} .caps=${this.caps}></gantry-queues-page>`;
      case 'usage':
        return html`<gantry-usage-page .session=${s} .caps=${this.caps}></gantry-usage-page>`;
      default:
        return html`<h1 tabindex="-1">Not found</h1>
          <p>No console page here. <a href=${href.overview()}>Go to the overview.</a></p>`;
    }
  }
}

customElements.define('gantry-console', ConsoleApp);

import { html, type ReactiveController, type ReactiveControllerHost } from 'lit';
import { GantryApiError } from '@gantry/client';

/** A job state or node health as a badge: the word is always there, the colour only repeats it. */
export function badge(value: string, extra = '') {
  return html`<span class="badge badge-${value.toLowerCase()} ${extra}">${value}</span>`;
}

/** What went wrong, for a person: the problem's title and detail, or the error's message. */
export function errorText(e: unknown): string {
  if (e instanceof GantryApiError) return `${e.problem.title ?? `HTTP ${e.status}`}${e.problem.detail ? `: ${e.problem.detail}` : ''}`;
  return (e as Error)?.message ?? String(e);
}

export function errorBox(e: unknown) {
  return e ? html`<p class="error" role="alert">${errorText(e)}</p>` : null;
}

/**
 * Runs `fn` now and then every `ms` after each run ends (never two at once), while its page is
 * on screen: a Lit controller, started when the page connects and stopped when it leaves. A failed
 * run is kept for the page to show and the next run tries again.
 */
export class Poller implements ReactiveController {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private stopped = true;

  constructor(
    host: ReactiveControllerHost,
    private readonly fn: () => Promise<void>,
    private readonly ms: number,
  ) {
    host.addController(this);
  }

  hostConnected(): void {
    this.start();
  }

  hostDisconnected(): void {
    this.stop();
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    void this.tick();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Runs now (after a change the user made) and restarts the interval. */
  async now(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    await this.tick();
  }

  private async tick(): Promise<void> {
    try {
      await this.fn();
    } catch {
      // the page shows its own error state
    }
    if (!this.stopped) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = setTimeout(() => void this.tick(), this.ms);
    }
  }
}

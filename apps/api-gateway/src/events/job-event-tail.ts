import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { Counter } from 'prom-client';
import { DataSource } from 'typeorm';
import { StreamPosition, StreamedJobEvent, autocommit, currentStreamPosition, readJobEventStream } from '@gantry/persistence';
import type { Logger } from '@gantry/platform';
import { CONFIG, SERVICE_LOGGER } from '@gantry/runtime';
import { GatewayEnv } from '../config';

export type EventListener = (event: StreamedJobEvent) => void;

const tailReads = new Counter({ name: 'gantry_event_tail_reads_total', help: 'Reads of new job events by the gateway event tail' });
const tailEvents = new Counter({ name: 'gantry_event_tail_events_total', help: 'Job events the gateway event tail read and handed to followers' });

/** Rows per read; a full page is followed at once by the next. */
const PAGE = 1000;

/**
 * The one reader of new job events in a gateway process, shared by every stream it serves. While
 * anyone listens it reads the events committed since its last read, every GANTRY_STREAM_POLL_MS,
 * in stream order (ADR 0028), and hands each to the listeners of its job and to the listeners of
 * everything. A thousand followers cost one query per interval, not a thousand; with no listener
 * it reads nothing at all. The tail is only a fast path: followers read their backlog, and any gap,
 * from the database themselves.
 */
@Injectable()
export class JobEventTail implements OnModuleDestroy {
  private readonly byJob = new Map<string, Set<EventListener>>();
  private readonly everything = new Set<EventListener>();
  private position: StreamPosition | null = null;
  private started: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    @Inject(DataSource) private readonly ds: DataSource,
    @Inject(CONFIG) private readonly config: GatewayEnv,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * Listens to one job's events. Resolves once the tail has its starting point, so that a read of
   * the database made after this resolves overlaps what the tail delivers: nothing falls between.
   */
  async listenToJob(jobId: string, listener: EventListener): Promise<() => void> {
    let set = this.byJob.get(jobId);
    if (!set) this.byJob.set(jobId, (set = new Set()));
    set.add(listener);
    const unlisten = () => {
      set.delete(listener);
      if (set.size === 0 && this.byJob.get(jobId) === set) this.byJob.delete(jobId);
    };
    await this.ensureStarted().catch((e) => {
      unlisten();
      throw e;
    });
    return unlisten;
  }

  /** Listens to every job's events (the caller filters); resolves as listenToJob does. */
  async listenToAll(listener: EventListener): Promise<() => void> {
    this.everything.add(listener);
    const unlisten = () => void this.everything.delete(listener);
    await this.ensureStarted().catch((e) => {
      unlisten();
      throw e;
    });
    return unlisten;
  }

  private get listening(): boolean {
    return this.byJob.size > 0 || this.everything.size > 0;
  }

  private ensureStarted(): Promise<void> {
    if (this.started) return this.started;
    const started = (async () => {
      this.position = await currentStreamPosition(autocommit(this.ds));
      this.schedule();
    })();
    this.started = started;
    // A failed start is tried again by the next listener.
    started.catch(() => {
      if (this.started === started) this.started = null;
    });
    return started;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tick(), this.config.GANTRY_STREAM_POLL_MS);
  }

  private async tick(): Promise<void> {
    this.timer = null;
    if (!this.listening) {
      // Nobody listens: stop reading. The next listener starts again from "now".
      this.started = null;
      this.position = null;
      return;
    }
    try {
      for (;;) {
        const events = await readJobEventStream(autocommit(this.ds), this.position!, PAGE);
        tailReads.inc();
        for (const e of events) this.dispatch(e);
        if (events.length > 0) this.position = events[events.length - 1].position;
        tailEvents.inc(events.length);
        if (events.length < PAGE) break;
      }
    } catch (err) {
      this.logger.warn({ err }, 'event tail read failed; retrying');
    }
    this.schedule();
  }

  private dispatch(e: StreamedJobEvent): void {
    const forJob = this.byJob.get(e.jobId);
    if (forJob) for (const l of forJob) l(e);
    for (const l of this.everything) l(e);
  }

  onModuleDestroy(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }
}

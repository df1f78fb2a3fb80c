import type { StreamedJobEvent } from '@gantry/persistence';
import { SseStream } from './sse-stream';

/** What distinguishes one kind of stream from another (one job's events; every visible job's). */
export interface FollowSpec<P> {
  /** The database's events after `after`, in stream order, at most `limit`. */
  read(after: P, limit: number): Promise<StreamedJobEvent[]>;
  positionOf(e: StreamedJobEvent): P;
  /** The SSE id of an event: what the client sends back as Last-Event-ID. */
  idOf(e: StreamedJobEvent): string;
  /** True when `e` sorts after `last` (an event at or before it was sent already). */
  isAfter(e: StreamedJobEvent, last: P): boolean;
  /** True when `e` may be sent right after `last`; false means a gap, read from the database. */
  isNext(e: StreamedJobEvent, last: P): boolean;
  /** True for the event after which the stream ends. */
  isEnd(e: StreamedJobEvent): boolean;
  render(e: StreamedJobEvent): string;
}

/** Events read from the database per catch-up query. */
const CATCH_UP_PAGE = 500;

/**
 * Sends one stream's events in order, each once, from a starting position:
 * 1. catch up from the database (the backlog after Last-Event-ID) while live events from the tail
 *    wait in a bounded buffer;
 * 2. then send the buffered and further live events that come after the last one sent.
 * A buffer that overflows (a client slower than the event rate) is dropped and the follower catches
 * up from the database again, at its own pace: memory per stream stays bounded whatever the client
 * does. A gap in a job's seqs (isNext false) is read from the database the same way.
 */
export class EventFollower<P> {
  private buffer: StreamedJobEvent[] = [];
  private needsCatchUp = true;
  private wake: (() => void) | null = null;

  constructor(
    private readonly spec: FollowSpec<P>,
    private last: P,
    private readonly stream: SseStream,
    private readonly maxBuffered: number,
    /** End the stream once caught up even without an end event (the job had ended before we looked). */
    private readonly endWhenCaughtUp = false,
  ) {}

  /** The tail hands every live event of this stream here. */
  offer(e: StreamedJobEvent): void {
    if (this.buffer.length >= this.maxBuffered) {
      this.buffer = [];
      this.needsCatchUp = true;
    } else {
      this.buffer.push(e);
    }
    this.wake?.();
  }

  /** Runs until the end event was sent or the stream closed; then ends the stream. */
  async run(): Promise<void> {
    try {
      while (this.stream.isOpen) {
        if (this.needsCatchUp) {
          this.needsCatchUp = false;
          if ((await this.catchUp()) || this.endWhenCaughtUp) return;
          continue;
        }
        const e = this.buffer.shift();
        if (!e) {
          await Promise.race([new Promise<void>((r) => (this.wake = r)), this.stream.closed()]);
          this.wake = null;
          continue;
        }
        if (!this.spec.isAfter(e, this.last)) continue;
        if (!this.spec.isNext(e, this.last)) {
          this.needsCatchUp = true;
          continue;
        }
        if (await this.deliver(e)) return;
      }
    } finally {
      this.stream.end();
    }
  }

  /** Sends everything the database has after the last event sent; true if the end event was among it. */
  private async catchUp(): Promise<boolean> {
    for (;;) {
      const page = await this.spec.read(this.last, CATCH_UP_PAGE);
      for (const e of page) if (await this.deliver(e)) return true;
      if (page.length < CATCH_UP_PAGE || !this.stream.isOpen) return false;
    }
  }

  private async deliver(e: StreamedJobEvent): Promise<boolean> {
    await this.stream.send(this.spec.idOf(e), this.spec.render(e));
    this.last = this.spec.positionOf(e);
    return this.spec.isEnd(e);
  }
}

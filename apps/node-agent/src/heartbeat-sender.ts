import { Counter, Gauge, Histogram } from 'prom-client';
import { TOPICS } from '@gantry/contracts';
import { MessageProducer } from '@gantry/messaging';
import { NodeKeys } from './identity/node-keys';
import { NodeRuntime } from './node-runtime';

const beatsSent = new Counter({ name: 'gantry_agent_heartbeats_sent_total', help: 'Heartbeats acknowledged by Kafka' });
const fences = new Counter({ name: 'gantry_agent_self_fences_total', help: 'Times the agent stopped its attempts after losing Kafka' });
const beatsSkipped = new Counter({
  name: 'gantry_agent_heartbeats_skipped_total',
  help: 'Beats not sent because the agent fell more than MAX_CATCH_UP_SLOTS ticks behind (its event loop was late, or MAX_SENDS_IN_FLIGHT sends were unacknowledged that long)',
});
const sendsInFlight = new Gauge({
  name: 'gantry_agent_heartbeat_sends_in_flight',
  help: 'Heartbeat sends not yet acknowledged; growing means the agent cannot keep up with its fleet',
});
const sendSeconds = new Histogram({
  name: 'gantry_agent_heartbeat_send_seconds',
  help: 'Time from building a slot of beats to Kafka acknowledging them',
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
});

/**
 * Beats per Kafka send. A catch-up after a stall may owe a whole period (50,000 beats, ~50 MB): in
 * one request that exceeds the broker's message.max.bytes per partition batch and is refused, and
 * kafkajs retries it forever while every later send queues behind it.
 */
export const MAX_BEATS_PER_SEND = 1000;
/**
 * Most slots sent by one tick. Further behind than this, the missed slots are skipped (those nodes
 * beat next period): trying to send a whole late period at once builds tens of thousands of beats in
 * one go, blocks the event loop for seconds and falls further behind (a death spiral).
 */
export const MAX_CATCH_UP_SLOTS = 5;
/**
 * Sends not yet acknowledged at most. A slot that comes due while this many are out waits for a
 * later tick (and is skipped past MAX_CATCH_UP_SLOTS): an agent that builds beats faster than Kafka
 * takes them only piles up requests that time out, are retried and sent twice, and eats the CPU it
 * needs to send at all. Why 8: ADR 0010, "Figures behind the code" (bench:heartbeats).
 */
export const MAX_SENDS_IN_FLIGHT = 8;
/**
 * Beats a slot should hold, where the fleet is small enough that 100 ms ticks would send fewer.
 * Each send is a Kafka request whose fixed cost (encoding, a socket write, the broker's append and
 * ack) dwarfs a beat's, so many small slots made heartbeats most of a small agent's idle CPU
 * (ADR 0010). Fewer, fuller slots keep the same period per node.
 */
export const TARGET_BEATS_PER_SLOT = 20;
/** Slots per period at least, so that a fleet's beats stay spread over the period. */
export const MIN_SLOTS = 10;

export interface HeartbeatSenderOptions {
  periodMs: number;
  /** Signs each beat as its node (contract 4.1). */
  keys: NodeKeys;
  /** Un-acknowledged time after which every attempt is stopped. */
  fenceMs: number;
  logger: { warn(o: object, m: string): void };
  /** The port this agent serves its logs on (ADR 0021), added as `logsPort` to the beats of nodes with an address; null: none. */
  logsPort?: () => number | null;
}

/**
 * Sends every node's heartbeat once per period, spread evenly over it (node i beats in slot
 * i mod slots), many beats per Kafka send. Slots are computed once, so a tick costs its own beats,
 * not a pass over the whole fleet (50,000 nodes at 10 ticks/s). A slot lasts 100 ms, or longer
 * for a small fleet (see slotCount). Tracks when Kafka last acknowledged a beat and fences
 * the node's attempts when that is longer ago than the fence timeout.
 */
export class HeartbeatSender {
  private timer: NodeJS.Timeout | null = null;
  private tick = 0;
  private startedAt = 0;
  private lastAckAt = Date.now();
  private fenced = false;
  private readonly tickMs: number;
  private readonly slots: NodeRuntime[][];
  private inFlight = 0;

  constructor(
    private readonly producer: MessageProducer,
    private readonly nodes: NodeRuntime[],
    private readonly opts: HeartbeatSenderOptions,
  ) {
    const slotCount = HeartbeatSender.slotCount(nodes.length, opts.periodMs);
    this.tickMs = opts.periodMs / slotCount;
    this.slots = Array.from({ length: slotCount }, () => []);
    nodes.forEach((n, i) => this.slots[i % slotCount].push(n));
  }

  /**
   * Slots per period: one per 100 ms (at most one per period), fewer where that leaves slots with
   * fewer than TARGET_BEATS_PER_SLOT beats, but never fewer than MIN_SLOTS. 200 nodes at 5 s: 10
   * slots of 20 beats, 500 ms apart; 50,000 nodes at 5 s: 50 slots of 1,000, 100 ms apart.
   */
  static slotCount(fleetSize: number, periodMs: number): number {
    const most = Math.max(1, Math.round(periodMs / Math.min(100, periodMs)));
    const least = Math.min(MIN_SLOTS, most);
    return Math.min(most, Math.max(least, Math.ceil(fleetSize / TARGET_BEATS_PER_SLOT)));
  }

  /** One beat from every node now (registers the fleet at once), then the spread cadence. */
  async start(): Promise<void> {
    for (let i = 0; i < this.nodes.length; i += MAX_BEATS_PER_SEND) await this.send(this.nodes.slice(i, i + MAX_BEATS_PER_SEND));
    this.startedAt = Date.now();
    this.timer = setInterval(() => this.onTick(), this.tickMs);
  }

  /**
   * Sends every slot due by the clock, so a late timer (a busy event loop) does not lower the rate,
   * as far as MAX_SENDS_IN_FLIGHT allows; the rest waits for a later tick.
   */
  private onTick(): void {
    // The slot whose time has come: slot 0 at the first tick after start, one more every tickMs.
    const target = Math.floor((Date.now() - this.startedAt) / this.tickMs) - 1;
    const skipTo = target - Math.min(MAX_CATCH_UP_SLOTS, this.slots.length) + 1;
    if (skipTo > this.tick) beatsSkipped.inc(this.slotSize(this.tick, skipTo));
    this.tick = Math.max(this.tick, skipTo);
    // Room for this many beats; with nothing out, at least one slot whatever its size.
    const room = (MAX_SENDS_IN_FLIGHT - this.inFlight) * MAX_BEATS_PER_SEND;
    const due: NodeRuntime[] = [];
    while (this.tick <= target) {
      const slot = this.slots[this.tick % this.slots.length];
      if (due.length + slot.length > room && !(this.inFlight === 0 && due.length === 0)) break;
      due.push(...slot);
      this.tick++;
    }
    for (let i = 0; i < due.length; i += MAX_BEATS_PER_SEND) void this.send(due.slice(i, i + MAX_BEATS_PER_SEND)).catch(() => undefined);
    this.checkFence();
  }

  private slotSize(from: number, to: number): number {
    let n = 0;
    for (let t = from; t < to && t < from + this.slots.length; t++) n += this.slots[t % this.slots.length].length;
    return n;
  }

  private async send(nodes: NodeRuntime[]): Promise<void> {
    const stopTimer = sendSeconds.startTimer();
    sendsInFlight.inc();
    this.inFlight++;
    try {
      const beats = await Promise.all(nodes.map((n) => n.heartbeat()));
      await this.producer.send(
        TOPICS.heartbeats,
        beats.map((b) => {
          const logsPort = b.address ? this.opts.logsPort?.() : null;
          // Bytes once: signed and sent as they are (a string would be encoded to UTF-8 twice).
          const value = Buffer.from(JSON.stringify(logsPort ? { ...b, logsPort } : b));
          return { key: b.nodeId, value, headers: this.opts.keys.headers(b.nodeId, value) };
        }),
      );
      this.lastAckAt = Date.now();
      this.fenced = false;
      beatsSent.inc(beats.length);
    } catch (err) {
      this.opts.logger.warn({ err, silentForMs: Date.now() - this.lastAckAt }, 'heartbeats not acknowledged');
      throw err;
    } finally {
      this.inFlight--;
      sendsInFlight.dec();
      stopTimer();
    }
  }

  private checkFence(): void {
    if (this.fenced || Date.now() - this.lastAckAt <= this.opts.fenceMs) return;
    this.fenced = true;
    fences.inc();
    this.opts.logger.warn({ fenceMs: this.opts.fenceMs }, 'no heartbeat acknowledged within the fence timeout; stopping every attempt');
    for (const n of this.nodes) n.stopAll('FENCED');
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}

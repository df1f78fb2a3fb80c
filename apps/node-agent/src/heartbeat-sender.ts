import { Producer } from 'kafkajs';
import { Counter } from 'prom-client';
import { TOPICS } from '@gantry/contracts';
import { NodeRuntime } from './node-runtime';

const beatsSent = new Counter({ name: 'gantry_agent_heartbeats_sent_total', help: 'Heartbeats acknowledged by Kafka' });
const fences = new Counter({ name: 'gantry_agent_self_fences_total', help: 'Times the agent stopped its attempts after losing Kafka' });

export interface HeartbeatSenderOptions {
  periodMs: number;
  /** Un-acknowledged time after which every attempt is stopped. */
  fenceMs: number;
  logger: { warn(o: object, m: string): void };
}

/**
 * Sends every node's heartbeat once per period, spread evenly over it (node i beats in slot
 * i mod slots), many beats per Kafka send. Tracks when Kafka last acknowledged a beat and fences
 * the node's attempts when that is longer ago than the fence timeout.
 */
export class HeartbeatSender {
  private timer: NodeJS.Timeout | null = null;
  private tick = 0;
  private lastAckAt = Date.now();
  private fenced = false;
  private readonly tickMs: number;
  private readonly slots: number;

  constructor(private readonly producer: Producer, private readonly nodes: NodeRuntime[], private readonly opts: HeartbeatSenderOptions) {
    this.tickMs = Math.min(100, opts.periodMs);
    this.slots = Math.max(1, Math.round(opts.periodMs / this.tickMs));
  }

  /** One beat from every node now (registers the fleet at once), then the spread cadence. */
  async start(): Promise<void> {
    for (let i = 0; i < this.nodes.length; i += 1000) await this.send(this.nodes.slice(i, i + 1000));
    this.timer = setInterval(() => this.onTick(), this.tickMs);
  }

  private onTick(): void {
    const slot = this.tick++ % this.slots;
    const due = this.nodes.filter((_, i) => i % this.slots === slot);
    if (due.length > 0) void this.send(due).catch(() => undefined);
    this.checkFence();
  }

  private async send(nodes: NodeRuntime[]): Promise<void> {
    const beats = await Promise.all(nodes.map((n) => n.heartbeat()));
    try {
      await this.producer.send({
        topic: TOPICS.heartbeats,
        messages: beats.map((b) => ({ key: b.nodeId, value: JSON.stringify(b) })),
      });
      this.lastAckAt = Date.now();
      this.fenced = false;
      beatsSent.inc(beats.length);
    } catch (err) {
      this.opts.logger.warn({ err, silentForMs: Date.now() - this.lastAckAt }, 'heartbeats not acknowledged');
      throw err;
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

import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { hostname } from 'node:os';
import { Counter } from 'prom-client';
import { DataSource } from 'typeorm';
import { TOPICS } from '@gantry/contracts';
import { MessageProducer } from '@gantry/messaging';
import {
  Leadership,
  STREAM_ORIGIN,
  StreamPosition,
  acquireLeadership,
  autocommit,
  holdsLeadership,
  inTransaction,
  loadStreamOffset,
  readJobEventStream,
  releaseLeadership,
  saveStreamOffset,
} from '@gantry/persistence';
import type { Logger } from '@gantry/platform';
import { CONFIG, KAFKA_PRODUCER, SERVICE_LOGGER } from '@gantry/runtime';
import { GatewayEnv } from '../config';
import { toStreamEventView } from './event-streams.service';

const published = new Counter({ name: 'gantry_job_events_published_total', help: 'Job events published to gantry.job-events.v1' });

const LEASE = 'job-event-publisher';
const LEASE_MS = 10_000;
/** Events per Kafka send; each is a few hundred bytes, far below the broker's request limit. */
const BATCH = 500;

/**
 * Publishes every job event to `gantry.job-events.v1`, key = job id, in seq order per job (ADR 0028).
 * One gateway at a time does it, under a fenced lease: it reads the stream in its commit-safe order
 * from the offset saved in Postgres, awaits one send at a time (so kafkajs cannot reorder a retry),
 * and saves the new offset only while it still holds the lease. Outbox rows would not do: several
 * relays publish claimed batches at once, and two events of one job could cross. Delivery is
 * at-least-once: after a crash or a lost lease the next leader re-sends from the saved offset, so a
 * consumer drops an event whose seq it has already seen for that job; what is left is in order.
 */
@Injectable()
export class JobEventPublisher implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private running = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private leader: Leadership | null = null;
  private renewedAt = 0;
  private position: StreamPosition | null = null;
  private readonly holder = `${hostname()}-${process.pid}`;

  constructor(
    @Inject(DataSource) private readonly ds: DataSource,
    @Inject(KAFKA_PRODUCER) private readonly producer: MessageProducer,
    @Inject(CONFIG) private readonly config: GatewayEnv,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.GANTRY_PUBLISH_JOB_EVENTS !== 'true') return;
    this.running = true;
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    while (this.running) {
      let idle = true;
      try {
        if (await this.lead()) idle = (await this.publishBatch()) < BATCH;
      } catch (err) {
        this.logger.warn({ err }, 'job event publishing failed; retrying');
        this.position = null; // re-read the saved offset: what was sent but not saved goes again
      }
      if (idle) await this.pause(this.leader ? this.config.GANTRY_STREAM_POLL_MS : LEASE_MS / 3);
    }
  }

  /** Takes or renews the lease (a third of its life at most between renewals); false while another gateway holds it. */
  private async lead(): Promise<boolean> {
    if (this.leader && Date.now() - this.renewedAt < LEASE_MS / 3) return true;
    const next = await acquireLeadership(autocommit(this.ds), LEASE, this.holder, LEASE_MS);
    if (!next || next.epoch !== this.leader?.epoch) this.position = null; // someone else may have moved the offset
    this.leader = next;
    this.renewedAt = Date.now();
    return next !== null;
  }

  /** Sends the next events after the saved offset; returns how many. */
  async publishBatch(): Promise<number> {
    const sql = autocommit(this.ds);
    this.position ??= (await loadStreamOffset(sql, LEASE)) ?? STREAM_ORIGIN;
    const events = await readJobEventStream(sql, this.position, BATCH);
    if (events.length === 0) return 0;
    await this.producer.send(
      TOPICS.jobEvents,
      events.map((e) => ({ key: e.jobId, value: JSON.stringify(toStreamEventView(e)) })),
    );
    const next = events[events.length - 1].position;
    const leader = this.leader!;
    const stillLeader = await inTransaction(this.ds, async (tx) => {
      if (!(await holdsLeadership(tx, leader))) return false;
      await saveStreamOffset(tx, LEASE, next);
      return true;
    });
    if (!stillLeader) {
      // Deposed mid-batch: the new leader sends these again from the offset it reads.
      this.leader = null;
      this.position = null;
      return 0;
    }
    this.position = next;
    published.inc(events.length);
    return events.length;
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
    if (this.leader) await releaseLeadership(autocommit(this.ds), this.leader).catch(() => undefined);
  }
}

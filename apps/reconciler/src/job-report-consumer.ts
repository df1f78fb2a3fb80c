import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Kafka, Producer } from 'kafkajs';
import { JobReportMessage, TOPICS, parseMessage } from '@gantry/contracts';
import { BatchConsumer, DeadLetterPublisher, TerminalFailure, withConsumerSpan } from '@gantry/messaging';
import { isPermanentDataError } from '@gantry/persistence';
import { CONFIG, KAFKA, KAFKA_PRODUCER, ReadinessRegistry, SERVICE_LOGGER } from '@gantry/runtime';
import type { Logger } from '@gantry/platform';
import { ReconcilerEnv } from './config';
import { JobReportApplier } from './job-report-applier';

/** Consumes gantry.job-reports.v1; reports of one node are applied in order (key = nodeId). */
@Injectable()
export class JobReportConsumer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly consumer: BatchConsumer<JobReportMessage>;

  constructor(
    @Inject(KAFKA) kafka: Kafka,
    @Inject(KAFKA_PRODUCER) producer: Producer,
    @Inject(SERVICE_LOGGER) logger: Logger,
    @Inject(CONFIG) config: ReconcilerEnv,
    applier: JobReportApplier,
    readiness: ReadinessRegistry,
  ) {
    this.consumer = new BatchConsumer<JobReportMessage>({
      kafka,
      groupId: 'gantry-reconciler',
      topic: TOPICS.jobReports,
      fromBeginning: true, // every report ever accepted is applied; none is lost before the first start
      parse: (raw) => parseMessage(JobReportMessage, raw),
      handleBatch: async (items) => {
        const failures: TerminalFailure<JobReportMessage>[] = [];
        for (const item of items) {
          const r = item.value;
          try {
            await withConsumerSpan(item.headers, 'apply job report', { 'gantry.job_id': r.jobId, 'gantry.attempt': r.attempt }, () => applier.apply(r));
          } catch (e) {
            // A report the database can never accept is parked; anything else is retried.
            if (!isPermanentDataError(e)) throw e;
            failures.push({ item, error: e as Error });
          }
        }
        return failures;
      },
      deadLetters: new DeadLetterPublisher(producer),
      partitionsConsumedConcurrently: config.GANTRY_REPORT_CONCURRENCY,
      logger,
    });
    readiness.add(this.consumer.readinessCheck('job-report-consumer'));
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.consumer.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.consumer.stop();
  }
}

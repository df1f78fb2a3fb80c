import { Inject, Injectable } from '@nestjs/common';
import { JobReportMessage, TOPICS, parseMessage } from '@gantry/contracts';
import { TerminalFailure, withConsumerSpan } from '@gantry/messaging';
import { isPermanentDataError } from '@gantry/persistence';
import { CONFIG, Consumers } from '@gantry/runtime';
import { ReconcilerEnv } from './config';
import { JobReportApplier } from './job-report-applier';

/** Consumes gantry.job-reports.v1; reports of one node are applied in order (key = nodeId). */
@Injectable()
export class JobReportConsumer {
  constructor(consumers: Consumers, @Inject(CONFIG) config: ReconcilerEnv, applier: JobReportApplier) {
    consumers.create<JobReportMessage>('job-report-consumer', {
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
      partitionsConsumedConcurrently: config.GANTRY_REPORT_CONCURRENCY,
    });
  }
}

import { Inject, Injectable } from '@nestjs/common';
import { JobReportMessage, TOPICS, parseJobReport } from '@gantry/contracts';
import { TerminalFailure } from '@gantry/messaging';
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
      parse: parseJobReport,
      handleBatch: async (items) => {
        // A report the database can never accept is parked; anything else is retried (thrown).
        const results = await applier.applyBatch(items);
        const failures: TerminalFailure<JobReportMessage>[] = [];
        results.forEach((r, i) => 'error' in r && failures.push({ item: items[i], error: r.error }));
        return failures;
      },
      partitionsConsumedConcurrently: config.GANTRY_REPORT_CONCURRENCY,
    });
  }
}

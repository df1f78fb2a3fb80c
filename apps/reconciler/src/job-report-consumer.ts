import { Inject, Injectable } from '@nestjs/common';
import { JobReportMessage, TOPICS, parseJobReport } from '@gantry/contracts';
import { TerminalFailure } from '@gantry/messaging';
import { CONFIG, Consumers, NodeCredentialDirectory, admitNodeMessage, authenticateNodeMessage, reauthenticateNodeMessages } from '@gantry/runtime';
import { ReconcilerEnv } from './config';
import { JobReportApplier } from './job-report-applier';
import { ReconcilerView } from './reconciler-view';

/**
 * Consumes gantry.job-reports.v1; reports of one node are applied in order (key = nodeId). Only
 * what a node can prove is applied (contract 4.1): signed by an enrolled node, naming that node,
 * timed within the skew window of the broker's receive time, and about a rank the node holds.
 */
@Injectable()
export class JobReportConsumer {
  constructor(
    consumers: Consumers,
    @Inject(CONFIG) config: ReconcilerEnv,
    applier: JobReportApplier,
    directory: NodeCredentialDirectory,
    view: ReconcilerView,
  ) {
    consumers.create<JobReportMessage>('job-report-consumer', {
      groupId: 'gantry-reconciler',
      topic: TOPICS.jobReports,
      fromBeginning: true, // every report ever accepted is applied; none is lost before the first start
      reauthenticate: reauthenticateNodeMessages(directory),
      authenticate: authenticateNodeMessage(directory),
      parse: parseJobReport,
      admit: admitNodeMessage<JobReportMessage>(
        (r) => r.nodeId,
        (r) => r.at,
        config.GANTRY_CLOCK_SKEW_MS,
      ),
      handleBatch: async (items) => {
        // A report the database can never accept is parked, and so is one about a rank its node does
        // not hold; anything else that fails is thrown and tried again.
        const results = await applier.applyBatch(items);
        const failures: TerminalFailure<JobReportMessage>[] = [];
        results.forEach((r, i) => {
          if ('error' in r) failures.push({ item: items[i], error: r.error });
          else if (r.outcome === 'foreign') {
            const rejection = {
              reason: 'not-assigned',
              detail: `node ${items[i].value.nodeId} holds no rank of job ${items[i].value.jobId} attempt ${items[i].value.attempt}`,
            };
            failures.push({ item: items[i], error: new Error(rejection.detail), rejection });
          }
        });
        return failures;
      },
      partitionsConsumedConcurrently: config.GANTRY_REPORT_CONCURRENCY,
      // A report held up in Kafka must not read as an attempt its node dropped (ADR 0007).
      onFetch: (at) => view.fetched('report fetches', at),
      onInterrupted: () => view.interrupted('report fetches'),
    });
  }
}

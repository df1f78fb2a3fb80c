import { DynamicModule, Module } from '@nestjs/common';
import { RuntimeModule } from '@gantry/runtime';
import { ReconcilerEnv } from './config';
import { JobReportApplier } from './job-report-applier';
import { JobReportConsumer } from './job-report-consumer';
import { HeartbeatReconcileConsumer } from './heartbeat-reconcile-consumer';
import { NodeReconciler } from './node-reconciler';
import { AttemptLossApplier } from './attempt-loss-applier';
import { FailureDetector } from './failure-detector';
import { DrainEnforcer } from './drain-enforcer';
import { LeaderElection } from './leader-election';
import { ReconcilerView } from './reconciler-view';
import { UsageFolder } from './usage-folder';

@Module({})
export class ReconcilerModule {
  static forConfig(config: ReconcilerEnv): DynamicModule {
    return {
      module: ReconcilerModule,
      imports: [
        RuntimeModule.forRoot({
          service: 'reconciler',
          config,
          needs: { postgres: true, redis: true },
          outboxRelay: true,
          sendsCommands: true,
          verifiesNodes: true,
        }),
      ],
      providers: [
        ReconcilerView,
        JobReportApplier,
        JobReportConsumer,
        AttemptLossApplier,
        NodeReconciler,
        HeartbeatReconcileConsumer,
        LeaderElection,
        FailureDetector,
        DrainEnforcer,
        UsageFolder,
      ],
    };
  }
}

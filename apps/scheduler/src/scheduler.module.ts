import { DynamicModule, Module } from '@nestjs/common';
import { RuntimeModule } from '@gantry/runtime';
import { SchedulerEnv } from './config';
import { LifecycleWakeConsumer } from './lifecycle-wake-consumer';
import { PlacementCommitter } from './placement-committer';
import { PreemptionStep } from './preemption-step';
import { SchedulingCycle } from './scheduling-cycle';
import { SchedulingLoop } from './scheduling-loop';

@Module({})
export class SchedulerModule {
  static forConfig(config: SchedulerEnv): DynamicModule {
    return {
      module: SchedulerModule,
      imports: [
        RuntimeModule.forRoot({
          service: 'scheduler',
          config,
          needs: { postgres: true, redis: true },
          outboxRelay: true,
        }),
      ],
      providers: [PlacementCommitter, PreemptionStep, SchedulingCycle, SchedulingLoop, LifecycleWakeConsumer],
    };
  }
}

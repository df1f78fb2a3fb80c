import { Injectable } from '@nestjs/common';
import { JobLifecycleMessage, TOPICS, parseMessage } from '@gantry/contracts';
import { Consumers } from '@gantry/runtime';
import { SchedulingLoop } from './scheduling-loop';

/** Wakes the scheduling loop when a job is created or capacity is freed, instead of waiting for the next tick. */
@Injectable()
export class LifecycleWakeConsumer {
  constructor(consumers: Consumers, loop: SchedulingLoop) {
    consumers.create<JobLifecycleMessage>('lifecycle-consumer', {
      groupId: 'gantry-scheduler',
      topic: TOPICS.jobLifecycle,
      fromBeginning: false, // a missed wake-up is harmless: the loop also ticks
      parse: (raw) => parseMessage(JobLifecycleMessage, raw),
      handleBatch: async () => {
        loop.poke();
        return [];
      },
    });
  }
}

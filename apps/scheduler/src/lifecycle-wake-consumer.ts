import { Injectable } from '@nestjs/common';
import { TOPICS } from '@gantry/contracts';
import { Consumers } from '@gantry/runtime';
import { SchedulingLoop } from './scheduling-loop';

/** Wakes the scheduling loop when a job is created or capacity is freed, instead of waiting for the next tick. */
@Injectable()
export class LifecycleWakeConsumer {
  constructor(consumers: Consumers, loop: SchedulingLoop) {
    consumers.create<null>('lifecycle-consumer', {
      groupId: 'gantry-scheduler',
      topic: TOPICS.jobLifecycle,
      fromBeginning: false, // a missed wake-up is harmless: the loop also ticks
      // Any message means "look again"; its content is not used, so it is not validated either.
      parse: () => ({ ok: true, value: null }),
      handleBatch: async () => {
        loop.poke();
        return [];
      },
    });
  }
}

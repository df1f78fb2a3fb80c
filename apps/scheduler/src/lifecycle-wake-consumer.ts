import { Injectable } from '@nestjs/common';
import { LifecycleType, TOPICS, parseJobLifecycle } from '@gantry/contracts';
import { Consumers } from '@gantry/runtime';
import { SchedulingLoop } from './scheduling-loop';

/** Wakes the scheduling loop when a job is created or capacity is freed, instead of waiting for the next tick. */
@Injectable()
export class LifecycleWakeConsumer {
  constructor(consumers: Consumers, loop: SchedulingLoop) {
    consumers.create<LifecycleType>('lifecycle-consumer', {
      groupId: 'gantry-scheduler',
      topic: TOPICS.jobLifecycle,
      fromBeginning: false, // a missed wake-up is harmless: the loop also ticks
      parse: (raw) => {
        const m = parseJobLifecycle(raw);
        return m.ok ? { ok: true, value: m.value.type } : m;
      },
      handleBatch: async (batch) => {
        for (const m of batch) loop.poke(m.value);
        return [];
      },
    });
  }
}

import { Counter } from 'prom-client';

/** Messages refused for who sent them or when (contract 4.1), by topic and reason code. */
export const messagesRejected = new Counter({
  name: 'gantry_messages_rejected_total',
  help: 'Messages refused because their sender could not prove it may send them (unsigned, bad signature, unknown or revoked node, another node, clock skew, replay)',
  labelNames: ['topic', 'reason'],
});

/** Messages a consumer parked on the dead-letter topic (bad data, refused senders, failures that never pass), by source topic. */
export const messagesDeadLettered = new Counter({
  name: 'gantry_messages_dead_lettered_total',
  help: 'Consumed messages parked on the dead-letter topic, by the topic they came from',
  labelNames: ['topic'],
});

export * from './kafka-client';
export * from './topic-admin';
export * from './trace-headers';
export * from './dead-letter';
export * from './batch-consumer';
export * from './outbox-relay';

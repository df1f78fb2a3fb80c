export * from './entities';
export * from './data-source';
export * from './migrations';
export * from './sql/sql';
export * from './sql/outbox';
export * from './sql/job-events';
export * from './sql/job-rows';
export * from './sql/nodes';

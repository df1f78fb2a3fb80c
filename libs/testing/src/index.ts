export * from './test-env';
export * from './test-resources';
export * from './clients';
export * from './builders/job.builder';
export * from './builders/node.builder';
export * from './builders/placement.builder';
export * from './test-stack';

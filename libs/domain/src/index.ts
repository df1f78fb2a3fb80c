export * from './jobs/job-state';
export * from './jobs/job-state-machine';
export * from './jobs/attempt-outcome';
export * from './jobs/job-report-decision';
export * from './resources/resources';
export * from './nodes/node-health';
export * from './placement/placement';

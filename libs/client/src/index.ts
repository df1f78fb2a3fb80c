export * from './retry-policy';
export * from './gantry-client';

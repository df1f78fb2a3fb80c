export * from './retry-policy';
export * from './gantry-client';
export * from './api-types';
export type { paths, components, operations } from './generated/gantry-api';
export { readSse } from './sse-reader';

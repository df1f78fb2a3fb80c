import type { components, operations } from './generated/gantry-api';

/** Names for the generated schemas (libs/client/src/generated/gantry-api.ts, from docs/openapi.json). */
type Schemas = components['schemas'];
export type Job = Schemas['JobView'];
export type JobPage = Schemas['JobPage'];
export type JobEvent = Schemas['JobEventView'];
export type JobStreamEvent = Schemas['JobStreamEventView'];
export type JobStreamEventPage = Schemas['JobStreamEventPage'];
export type CreateJob = Schemas['CreateJobDto'];
export type Queue = Schemas['QueueView'];
export type CreateQueue = Schemas['CreateQueueDto'];
export type UpdateQueue = Schemas['UpdateQueueDto'];
export type Node = Schemas['NodeView'];
export type NodePage = Schemas['NodePage'];
export type NodeEvent = Schemas['NodeEventView'];
export type NodeInventory = Schemas['NodeInventoryDto'];
export type InventoryPatch = Schemas['InventoryPatchDto'];
export type ClusterSummary = Schemas['ClusterSummaryView'];
export type ClusterHeatmap = Schemas['ClusterHeatmapView'];
export type HeatmapRack = Schemas['HeatmapRackView'];
export type Whoami = Schemas['WhoamiView'];
export type TokenCreated = Schemas['TokenView'];
export type Problem = Schemas['Problem'];
/** GET /v1/jobs/{id}/explain: why a queued job waits (contract §4.7). */
export type JobExplanation = Schemas['JobExplanationView'];
export type JobState = Job['state'];
/** GET /v1/jobs/{id}/logs's query: attempt, rank, tailLines, follow (contract §4.4). */
/** GET /v1/usage (contract 5.4): one row per bucket and group. */
export type UsageRow = Schemas['UsageRow'];
export type UsageQuery = operations['usage.report']['parameters']['query'];
export type JobLogsQuery = NonNullable<operations['jobs.logs']['parameters']['query']>;

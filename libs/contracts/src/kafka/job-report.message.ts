import { Static, Type } from '@sinclair/typebox';
import { EpochMs, Int, JobId, NodeId, OneOf, OpenObject, OrNull, Text } from './field-schemas';
import { messageParser } from './message-parser';

export const REPORTED_STATES = ['RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED'] as const;
export type ReportedState = (typeof REPORTED_STATES)[number];

/** gantry.job-reports.v1: what an agent saw happen to one attempt on its node; key = nodeId. */
export const JobReportSchema = OpenObject(
  {
    nodeId: NodeId(),
    jobId: JobId(),
    attempt: Int(1),
    state: OneOf(REPORTED_STATES),
    exitCode: Type.Optional(OrNull(Int(-2147483648, 2147483647))),
    reason: Type.Optional(OrNull(Text({ maxLength: 1024 }))),
    at: EpochMs(),
  },
  { description: 'gantry.job-reports.v1 (key = nodeId)' },
);

export type JobReportMessage = Static<typeof JobReportSchema>;

/** Parses one gantry.job-reports.v1 value. */
export const parseJobReport = messageParser(JobReportSchema);

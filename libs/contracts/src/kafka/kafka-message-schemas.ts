import { TSchema } from '@sinclair/typebox';
import { TOPICS } from '../topics';
import { AgentCommandSchema } from './agent-command.message';
import { HeartbeatSchema } from './heartbeat.message';
import { JobLifecycleSchema } from './job-lifecycle.message';
import { JobReportSchema } from './job-report.message';

/**
 * The schema of each topic's messages, as JSON Schema: what the consumers validate with, and what
 * agents written by others can validate against (written to libs/contracts/schemas/ by
 * `npm run schemas:kafka`; a unit test fails when the files drift from these).
 */
export const KAFKA_MESSAGE_SCHEMAS: Readonly<Record<string, TSchema>> = {
  [TOPICS.heartbeats]: HeartbeatSchema,
  [TOPICS.jobReports]: JobReportSchema,
  [TOPICS.agentCommands]: AgentCommandSchema,
  [TOPICS.jobLifecycle]: JobLifecycleSchema,
};

/** The published JSON Schema document of one topic's messages, as written to libs/contracts/schemas/<topic>.schema.json. */
export function kafkaMessageSchemaDocument(topic: string): string {
  const schema = KAFKA_MESSAGE_SCHEMAS[topic];
  if (!schema) throw new Error(`no message schema for topic ${topic}`);
  return `${JSON.stringify({ $schema: 'https://json-schema.org/draft/2020-12/schema', title: topic, ...schema }, null, 2)}\n`;
}

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ServiceName } from './service-process';

/**
 * What scripts/kafka/start.sh writes to <data dir>/credentials.json: one SCRAM user per role; and
 * beside it the key that signs real agents' tokens (agent-token-key.pem, ADR 0034).
 */
export interface KafkaCredentials {
  mechanism: 'scram-sha-512' | 'scram-sha-256' | 'plain';
  users: Record<string, { username: string; password: string }>;
  /** The broker's agent token key (PEM), for the gateway's GANTRY_AGENT_KAFKA_TOKEN_KEY; absent for a broker started otherwise. */
  agentTokenKey?: string;
}

/**
 * Which Kafka principal each service runs as (libs/messaging's KAFKA_GRANTS give each its ACLs). The
 * agent's is the simulated fleet's; a real agent is its node's own principal (Stack.envFor).
 */
export const SERVICE_KAFKA_ROLE: Record<ServiceName, string> = {
  'api-gateway': 'gateway',
  scheduler: 'scheduler',
  'heartbeat-ingester': 'ingester',
  reconciler: 'reconciler',
  'node-agent': 'fleet',
};

export function readKafkaCredentials(file: string): KafkaCredentials {
  const c = JSON.parse(readFileSync(file, 'utf8')) as KafkaCredentials;
  if (!c.mechanism || !c.users?.admin) throw new Error(`${file} is not a Kafka credentials file (no mechanism or admin user)`);
  const keyFile = join(dirname(file), 'agent-token-key.pem');
  if (existsSync(keyFile)) c.agentTokenKey = readFileSync(keyFile, 'utf8');
  return c;
}

/** The credentials of the broker npm start / npm test brought up (GANTRY_KAFKA_CREDENTIALS_FILE), or null for a broker given from outside. */
export function kafkaCredentialsFromEnv(): KafkaCredentials | null {
  const file = process.env.GANTRY_KAFKA_CREDENTIALS_FILE;
  return file ? readKafkaCredentials(file) : null;
}

/** The KAFKA_SASL_* variables of one role. */
export function kafkaEnvFor(credentials: KafkaCredentials, role: string): Record<string, string> {
  const u = credentials.users[role];
  if (!u) throw new Error(`no Kafka user for role ${role}`);
  return { KAFKA_SASL_MECHANISM: credentials.mechanism, KAFKA_SASL_USERNAME: u.username, KAFKA_SASL_PASSWORD: u.password };
}

/** The same as a client's security settings (for in-process clients: tests, benches, tools). */
export function kafkaSecurityFor(
  credentials: KafkaCredentials | null,
  role = 'admin',
): { sasl?: { mechanism: KafkaCredentials['mechanism']; username: string; password: string } } {
  if (!credentials) return {};
  const u = credentials.users[role];
  return { sasl: { mechanism: credentials.mechanism, username: u.username, password: u.password } };
}

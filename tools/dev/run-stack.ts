import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Stack, kafkaCredentialsFromEnv, persistentStackSecrets, stackSecretsFromEnv } from '@gantry/stack';

/**
 * Runs the four services and a simulated fleet as processes, prints the gateway URL and the
 * admin token, and stops them all on SIGINT/SIGTERM.
 */
async function main(): Promise<void> {
  const root = join(__dirname, '..', '..', '..');
  const port = Number(process.env.GANTRY_HTTP_PORT ?? 8080);
  const adminToken = process.env.GANTRY_ADMIN_TOKEN ?? `gantry-admin-${randomBytes(18).toString('base64url')}`;
  const logDir = join(root, '.cache', 'logs');
  const stack = new Stack({
    root,
    logDir,
    basePort: port,
    // Each service as its own Kafka user; the control plane's secrets kept across restarts.
    kafkaCredentials: kafkaCredentialsFromEnv(),
    secrets: stackSecretsFromEnv(() => persistentStackSecrets(join(root, '.cache', 'secrets'))),
    env: {
      GANTRY_ADMIN_TOKEN: adminToken,
      KAFKA_BROKERS: process.env.KAFKA_BROKERS ?? '127.0.0.1:9092',
      DATABASE_URL: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/gantry',
      REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    },
    serviceEnv: {
      'node-agent': {
        GANTRY_SIM_NODES: process.env.GANTRY_SIM_NODES ?? '200',
        GANTRY_SIM_EXECUTOR: process.env.GANTRY_SIM_EXECUTOR ?? 'process',
        GANTRY_AGENT_ID: process.env.GANTRY_AGENT_ID ?? 'dev-fleet',
        // The simulated nodes live on this host: they serve their logs here, on a port the OS picks (ADR 0021).
        GANTRY_NODE_ADDRESS: process.env.GANTRY_NODE_ADDRESS ?? '127.0.0.1',
        GANTRY_AGENT_LOGS_PORT: process.env.GANTRY_AGENT_LOGS_PORT ?? '0',
      },
    },
  });
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.error(`[gantry] ${signal}: stopping services`);
    await stack.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));

  const t0 = Date.now();
  await stack.start();
  console.log(`
Gantry is up (services ready in ${((Date.now() - t0) / 1000).toFixed(1)} s)
  gateway      ${stack.gatewayUrl}   (API docs: ${stack.gatewayUrl}/docs)
  admin token  ${adminToken}
  logs         ${logDir}

  curl -s -X POST ${stack.gatewayUrl}/v1/jobs -H "Authorization: Bearer ${adminToken}" \\
    -H 'Content-Type: application/json' -d '{"name":"hello","image":"none","command":["sh","-c","echo hi"]}'

Ctrl-C stops everything.`);
  for (const s of stack.services) {
    // A service that dies takes the stack down loudly rather than leaving a half-working system.
    void (async () => {
      while (!stopping) {
        await new Promise((r) => setTimeout(r, 1000));
        if (!s.running && !stopping) {
          console.error(`[gantry] ${s.opts.name} exited; see ${s.logFile}\n${s.logTail(20)}`);
          await stop('service exit');
        }
      }
    })();
  }
}

main().catch((e) => {
  console.error(`[gantry] ${(e as Error).message}`);
  process.exit(1);
});

import { LocalKafkaBroker, ServiceName, ServiceProcess, flushRedisDb, kafkaSecurityFor, waitFor } from '@gantry/stack';
import { sendPoison } from './poison';

/** What an injection did, for the record (durations in ms). */
export interface InjectionDetail {
  oldPid?: number;
  newPid?: number;
  /** SIGTERM until the process exited (graceful restarts), or the broker's stop. */
  stopMs?: number;
  /** A graceful stop that ran into the SIGKILL deadline. */
  forced?: boolean;
  /** The broker's start script, until it accepted connections. */
  startMs?: number;
  /** Poison: messages sent per topic. */
  poisoned?: Record<string, number>;
}

export interface Fault {
  /** Unique, used by CHAOS_FAULTS. */
  name: string;
  target: string;
  kind: 'kill -9' | 'SIGTERM restart' | 'broker restart' | 'Redis flush' | 'poison';
  /** Does the damage and starts the replacement, without waiting for it to be ready. */
  inject(): Promise<InjectionDetail>;
}

/** How long a graceful stop may take before ServiceProcess sends SIGKILL. */
export const GRACEFUL_STOP_MS = 20_000;

function killAndRestart(svc: ServiceProcess): Fault {
  return {
    name: `kill9-${svc.opts.service}`,
    target: svc.opts.service,
    kind: 'kill -9',
    async inject() {
      const oldPid = svc.pid;
      svc.kill('SIGKILL');
      await waitFor(`${svc.opts.name} gone after SIGKILL`, () => !svc.running, { timeoutMs: 10_000, intervalMs: 20 });
      // Restarted at once, as a supervisor (systemd, a kubelet) would.
      svc.start();
      return { oldPid, newPid: svc.pid };
    },
  };
}

function gracefulRestart(svc: ServiceProcess): Fault {
  return {
    name: `sigterm-${svc.opts.service}`,
    target: svc.opts.service,
    kind: 'SIGTERM restart',
    async inject() {
      const oldPid = svc.pid;
      const t = Date.now();
      await svc.stop(GRACEFUL_STOP_MS);
      const stopMs = Date.now() - t;
      svc.start();
      return { oldPid, newPid: svc.pid, stopMs, forced: stopMs >= GRACEFUL_STOP_MS };
    },
  };
}

function brokerRestart(broker: LocalKafkaBroker): Fault {
  return {
    name: 'restart-kafka',
    target: `kafka :${broker.port}`,
    kind: 'broker restart',
    async inject() {
      const t = Date.now();
      await broker.stop();
      const stopMs = Date.now() - t;
      const s = Date.now();
      await broker.start();
      return { stopMs, startMs: Date.now() - s };
    },
  };
}

/**
 * The "Redis restart" fault. The machine's redis-server is shared, so it is a FLUSHDB of the run's
 * own db: Gantry's Redis keeps nothing on disk, and a restarted empty Redis looks to Gantry exactly
 * like a flushed one (plus a short refused-connection window that this does not reproduce).
 */
function redisFlush(redisUrl: string): Fault {
  return {
    name: 'flush-redis',
    target: `redis ${new URL(redisUrl).pathname.slice(1) ? `db ${new URL(redisUrl).pathname.slice(1)}` : ''}`.trim(),
    kind: 'Redis flush',
    async inject() {
      await flushRedisDb(redisUrl);
      return {};
    },
  };
}

/** Forged, malformed and oversized messages on every topic (poison.ts), while the load runs. */
function poison(broker: LocalKafkaBroker, gatewayUrl: string, adminToken: string, databaseUrl: string): Fault {
  return {
    name: 'poison-every-topic',
    target: 'every topic',
    kind: 'poison',
    async inject() {
      const credentials = broker.credentials();
      return {
        poisoned: await sendPoison({
          brokers: broker.brokers, admin: kafkaSecurityFor(credentials, 'admin'), agent: kafkaSecurityFor(credentials, 'agent'), gatewayUrl, adminToken, databaseUrl,
        }),
      };
    },
  };
}

export interface FaultTargets {
  services: (name: ServiceName) => ServiceProcess;
  broker: LocalKafkaBroker;
  redisUrl: string;
  gatewayUrl: string;
  adminToken: string;
  databaseUrl: string;
}

/** Every fault, in the order a run injects them: the crashes first, then the infrastructure, then poison, then the clean restarts. */
export function allFaults(t: FaultTargets): Fault[] {
  const order: ServiceName[] = ['api-gateway', 'scheduler', 'heartbeat-ingester', 'reconciler', 'node-agent'];
  return [
    ...order.map((s) => killAndRestart(t.services(s))),
    brokerRestart(t.broker),
    redisFlush(t.redisUrl),
    poison(t.broker, t.gatewayUrl, t.adminToken, t.databaseUrl),
    ...order.map((s) => gracefulRestart(t.services(s))),
  ];
}

import { LocalKafkaBroker, ServiceName, ServiceProcess, flushRedisDb, kafkaSecurityFor, waitFor } from '@gantry/stack';
import { Overload, OverloadSummary } from './overload';
import { OwnPostgres } from './own-postgres';
import { OwnRedis } from './own-redis';
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
  /** Rolling restart: each replica's stop (ms) and its time to ready after its start (ms). */
  replicas?: Array<{ name: string; stopMs: number; readyMs: number; forced: boolean }>;
  /** Overload: what the open-loop client offered and what it got. */
  overload?: OverloadSummary;
}

export interface Fault {
  /** Unique, used by CHAOS_FAULTS. */
  name: string;
  target: string;
  kind: 'kill -9' | 'SIGTERM restart' | 'broker restart' | 'Redis flush' | 'Redis restart' | 'Postgres restart' | 'poison' | 'rolling restart' | 'overload';
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

function brokerRestart(broker: LocalKafkaBroker, replicas: string): Fault {
  return {
    name: 'restart-kafka',
    target: `kafka :${broker.port} (${replicas})`,
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

/** FLUSHDB of the run's db: what Gantry sees of a Redis restart, without the refused connections (restart-redis has those). */
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

/** The run's own redis-server stopped (SIGTERM) and started again, empty: a real restart, refused connections included. */
function redisRestart(redis: OwnRedis): Fault {
  return {
    name: 'restart-redis',
    target: `redis-server :${redis.port}`,
    kind: 'Redis restart',
    async inject() {
      const oldPid = redis.pid;
      const t = Date.now();
      await redis.stop();
      const stopMs = Date.now() - t;
      const s = Date.now();
      await redis.start();
      return { oldPid, newPid: redis.pid, stopMs, startMs: Date.now() - s };
    },
  };
}

/** The run's own Postgres cluster stopped (`pg_ctl -m fast`: connections dropped, transactions rolled back) and started again. */
function postgresRestart(pg: OwnPostgres): Fault {
  return {
    name: 'restart-postgres',
    target: `postgres :${pg.port}`,
    kind: 'Postgres restart',
    async inject() {
      const t = Date.now();
      await pg.stop('fast');
      const stopMs = Date.now() - t;
      const s = Date.now();
      await pg.start();
      return { stopMs, startMs: Date.now() - s };
    },
  };
}

/** Every gateway in turn: SIGTERM (it drains), start, ready, then the next; the load meanwhile goes to the others. */
function rollingGatewayRestart(gateways: ServiceProcess[]): Fault {
  return {
    name: 'rolling-restart-gateways',
    target: `${gateways.length} api-gateways`,
    kind: 'rolling restart',
    async inject() {
      const replicas: NonNullable<InjectionDetail['replicas']> = [];
      for (const g of gateways) {
        const t = Date.now();
        await g.stop(GRACEFUL_STOP_MS);
        const stopMs = Date.now() - t;
        g.start();
        const s = Date.now();
        await g.ready(60_000);
        replicas.push({ name: g.opts.name, stopMs, readyMs: Date.now() - s, forced: stopMs >= GRACEFUL_STOP_MS });
      }
      return { replicas };
    },
  };
}

/** Creates at `overload.rate` (a multiple of the sustainable rate), open-loop, for its duration, beside the steady load. */
function overloadFault(overload: Overload): Fault {
  return {
    name: 'overload',
    target: `${overload.rate} creates/s for ${overload.durationS} s`,
    kind: 'overload',
    async inject() {
      return { overload: await overload.run() };
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
          brokers: broker.brokers,
          admin: kafkaSecurityFor(credentials, 'admin'),
          agent: kafkaSecurityFor(credentials, 'fleet'),
          gatewayUrl,
          adminToken,
          databaseUrl,
        }),
      };
    },
  };
}

export interface FaultTargets {
  services: (name: ServiceName) => ServiceProcess;
  /** Every process of a service (replicas). */
  all: (name: ServiceName) => ServiceProcess[];
  broker: LocalKafkaBroker;
  redis: OwnRedis;
  /** Null when the run uses a shared Postgres: then there is no Postgres restart. */
  postgres: OwnPostgres | null;
  overload: Overload;
  redisUrl: string;
  gatewayUrl: string;
  adminToken: string;
  databaseUrl: string;
}

/**
 * Every fault, in the order a run injects them: the crashes first (of a service's first process),
 * then the infrastructure, then poison, then the clean restarts, the rolling restart of every
 * gateway, and last the overload (its backlog would delay the faults after it).
 */
export function allFaults(t: FaultTargets): Fault[] {
  const order: ServiceName[] = ['api-gateway', 'scheduler', 'heartbeat-ingester', 'reconciler', 'node-agent'];
  const replicas = `${t.all('api-gateway').length} gateways, ${t.all('scheduler').length} schedulers`;
  return [
    ...order.map((s) => killAndRestart(t.services(s))),
    brokerRestart(t.broker, replicas),
    redisFlush(t.redisUrl),
    redisRestart(t.redis),
    ...(t.postgres ? [postgresRestart(t.postgres)] : []),
    poison(t.broker, t.gatewayUrl, t.adminToken, t.databaseUrl),
    ...order.map((s) => gracefulRestart(t.services(s))),
    ...(t.all('api-gateway').length > 1 ? [rollingGatewayRestart(t.all('api-gateway'))] : []),
    overloadFault(t.overload),
  ];
}

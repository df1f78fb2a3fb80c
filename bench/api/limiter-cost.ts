/**
 * What the per-token rate limiter costs per request (ADR 0016): the gateway's CPU (process.cpuUsage)
 * and Redis's (INFO commandstats), with leases (as the gateway runs it) and with one Redis call per
 * request (what a per-request store does), requests one at a time and 64 at once. Uses Redis logical
 * db 43 of LIMITER_REDIS_URL's server (default the machine's, 127.0.0.1:6379) and resets its stats.
 * `npm run -s build && node dist/bench/api/limiter-cost.js [requests]`.
 */
import Redis from 'ioredis';
import { RateLimitBuckets } from '@gantry/persistence';
// The gateway's own limiter, measured in-process: a bench of one app's class, not a library's.
/* eslint-disable-next-line @nx/enforce-module-boundaries */
import { RateLimits, TokenRateLimiter } from '../../apps/api-gateway/src/rate-limit/token-rate-limiter';

const url = process.env.LIMITER_REDIS_URL || 'redis://127.0.0.1:6379/43';

async function run(label: string, limits: RateLimits, n: number, together: number): Promise<void> {
  const redis = new Redis(url, { enableAutoPipelining: true });
  const limiter = new TokenRateLimiter(new RateLimitBuckets(redis));
  const key = `limiter-cost-${Date.now()}-${Math.random()}`;
  for (let i = 0; i < 2000; i++) await limiter.take(key, limits); // JIT and script cache
  await redis.config('RESETSTAT');
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < n; i += together) await Promise.all(Array.from({ length: together }, () => limiter.take(key, limits)));
  const cpu = process.cpuUsage(cpu0);
  const m = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec(await redis.info('commandstats'));
  const [calls, usec] = m ? [Number(m[1]), Number(m[2])] : [0, 0];
  console.log(
    `${label}, ${together} at a time: gateway ${((cpu.user + cpu.system) / n).toFixed(2)} µs/request, ` +
      `Redis ${(usec / n).toFixed(2)} µs/request, ${(calls / n).toFixed(3)} calls/request`,
  );
  redis.disconnect();
}

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 50_000);
  // A bucket that never empties: only the cost is measured. At 100/s a lease is one token: one call per request.
  const never = 1e9;
  for (const together of [1, 64]) {
    await run('leases at 1,000/s', { ratePerS: 1000, burst: never }, n, together);
    await run('leases at 5,000/s', { ratePerS: 5000, burst: never }, n, together);
    await run('one call per request', { ratePerS: 100, burst: never }, n, together);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

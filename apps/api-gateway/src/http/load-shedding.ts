import underPressure from '@fastify/under-pressure';
import type { FastifyInstance } from 'fastify';

/**
 * Whether the gateway's own event loop is behind: requests then wait inside the process, before
 * admission control (GANTRY_ADMISSION_WAIT_MS, which times only the wait for a statement) can see
 * them. Measured by @fastify/under-pressure (the mean event-loop delay over each sample, from
 * perf_hooks' monitorEventLoopDelay); it answers nothing by itself here: RequestGate refuses creates
 * with it, and every other request (reads, cancels, probes) still passes.
 */
export async function measureEventLoopPressure(fastify: FastifyInstance, maxDelayMs: number, sampleMs: number): Promise<() => boolean> {
  if (maxDelayMs === 0) return () => false;
  await fastify.register(underPressure, { maxEventLoopDelay: maxDelayMs, sampleInterval: sampleMs, pressureHandler: () => undefined });
  return () => fastify.isUnderPressure();
}

import { HeartbeatMessage, NODE_ID_PATTERN } from './heartbeat.message';
import { Obj, isInt, isObj, parseWithFastPath } from './fast-parse';
import { ParseResult } from './parse-message';

/*
 * class-transformer + class-validator cost ~100-250 µs per heartbeat (8 nested GPU objects), which
 * alone would need more than two cores at 10,000 beats/s. This checks the same rules as the
 * HeartbeatMessage class by hand (~2 µs) and copies only the known fields (as `whitelist` would).
 * It may be stricter than the class, never looser: anything it does not accept goes through
 * parseMessage, which gives the verdict and the dead-letter reason. heartbeat-parser.spec.ts
 * checks the two agree.
 */

const isUnit = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 1;
const isStr = (v: unknown, min: number, max: number): v is string => typeof v === 'string' && v.length >= min && v.length <= max;

function fastHeartbeat(d: Obj): HeartbeatMessage | null {
  const { nodeId, bootId, seq, sentAt, zone, rack, gpus, cpu, memory, running } = d;
  if (typeof nodeId !== 'string' || !NODE_ID_PATTERN.test(nodeId) || !isStr(bootId, 1, 128) || !isInt(seq, 0) || !isInt(sentAt, 0)) return null;
  if (!isStr(zone, 1, 64) || !isStr(rack, 1, 64)) return null;
  if (!Array.isArray(running) || running.length > 1024) return null;
  const outRunning: HeartbeatMessage['running'] = [];
  for (const r of running) {
    if (!isObj(r) || !isStr(r.jobId, 1, 64) || !isInt(r.attempt, 1)) return null;
    outRunning.push({ jobId: r.jobId, attempt: r.attempt });
  }
  const beat: HeartbeatMessage = { nodeId, bootId, seq, sentAt, zone, rack, running: outRunning };
  // A liveness beat: no telemetry at all (anything partial is left to the class to refuse).
  if (gpus === undefined && cpu === undefined && memory === undefined) return beat;
  if (!Array.isArray(gpus) || gpus.length > 64) return null;
  if (!isObj(cpu) || !isInt(cpu.cores, 0, 65536) || !isUnit(cpu.utilization)) return null;
  if (!isObj(memory) || !isInt(memory.totalMiB, 0, 2 ** 40) || !isInt(memory.usedMiB, 0)) return null;
  const outGpus: NonNullable<HeartbeatMessage['gpus']> = [];
  for (const g of gpus) {
    if (!isObj(g) || !isInt(g.index, 0) || !isStr(g.model, 1, 64) || !isInt(g.memoryMiB, 0) || !isInt(g.memoryUsedMiB, 0) || !isUnit(g.utilization) || typeof g.healthy !== 'boolean') return null;
    outGpus.push({ index: g.index, model: g.model, memoryMiB: g.memoryMiB, memoryUsedMiB: g.memoryUsedMiB, utilization: g.utilization, healthy: g.healthy });
  }
  return { ...beat, gpus: outGpus, cpu: { cores: cpu.cores, utilization: cpu.utilization }, memory: { totalMiB: memory.totalMiB, usedMiB: memory.usedMiB } };
}

/** Parses one gantry.heartbeats.v1 value: the fast path for well-formed beats, the class for the rest. */
export function parseHeartbeat(raw: Buffer | null): ParseResult<HeartbeatMessage> {
  return parseWithFastPath(HeartbeatMessage, fastHeartbeat, raw);
}

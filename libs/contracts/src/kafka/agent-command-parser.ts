import { AgentCommandMessage } from './agent-command.message';
import { NODE_ID_PATTERN } from './heartbeat.message';
import { Obj, isInt, isObj, parseWithFastPath } from './fast-parse';
import { ParseResult } from './parse-message';

/*
 * The agent parses every command on gantry.agent-commands.v1; class-transformer + class-validator
 * cost ~35-45 µs a RUN (two nested objects), a fifth of the agent's CPU at 1,000 jobs/s. This
 * checks the AgentCommandMessage rules by hand (~2 µs with JSON.parse) and copies only the known
 * fields, as `whitelist` would. It may be stricter than the class, never looser: anything it does
 * not accept goes through parseMessage, which gives the verdict and the dead-letter reason.
 * agent-command-parser.spec.ts checks the two agree.
 *
 * Stricter on purpose, left to the class: a RUN without resources or gang, or with a reason; a KILL
 * with any RUN field; env values that are not strings, or env keys that class-transformer drops
 * (names on Object.prototype, such as `constructor`); jobId lengths counted in UTF-16 units, where
 * the class counts a surrogate pair or a variation sequence as one character.
 */

const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string');

/** env as the agent needs it: string values only, and no key class-transformer would skip. */
function isEnv(v: unknown): v is Record<string, string> {
  if (!isObj(v)) return false;
  for (const k in v) if (typeof v[k] !== 'string' || k in Object.prototype) return false;
  return true;
}

function fastCommand(d: Obj): AgentCommandMessage | null {
  const { type, nodeId, jobId, attempt, issuedAt } = d;
  if (typeof nodeId !== 'string' || !NODE_ID_PATTERN.test(nodeId) || typeof jobId !== 'string' || jobId.length < 1 || jobId.length > 64 || !isInt(attempt, 1) || !isInt(issuedAt, 0)) return null;
  const { image, command, env, resources, gang, reason } = d;
  if (type === 'KILL') {
    if (typeof reason !== 'string') return null;
    if (image !== undefined || command !== undefined || env !== undefined || resources !== undefined || gang !== undefined) return null;
    return { type, nodeId, jobId, attempt, issuedAt, reason };
  }
  if (type !== 'RUN' || reason !== undefined) return null;
  if (typeof image !== 'string' || !isStrings(command) || !isEnv(env) || !isObj(resources) || !isObj(gang)) return null;
  const { gpus, gpuModel, cpuCores, memoryMiB } = resources;
  if (!isInt(gpus, 0) || !isInt(cpuCores, 0) || !isInt(memoryMiB, 0) || !(gpuModel === undefined || gpuModel === null || typeof gpuModel === 'string')) return null;
  const { size, rank, nodeIds } = gang;
  if (!isInt(size, 1) || !isInt(rank, 0) || !isStrings(nodeIds)) return null;
  // command, env and nodeIds are JSON.parse's own fresh values, checked element by element: kept, not copied.
  return {
    type, nodeId, jobId, attempt, issuedAt, image, command, env,
    resources: gpuModel === undefined ? { gpus, cpuCores, memoryMiB } : { gpus, gpuModel, cpuCores, memoryMiB },
    gang: { size, rank, nodeIds },
  };
}

/** Parses one gantry.agent-commands.v1 value: the fast path for well-formed commands, the class for the rest. */
export function parseAgentCommand(raw: Buffer | null): ParseResult<AgentCommandMessage> {
  return parseWithFastPath(AgentCommandMessage, fastCommand, raw);
}

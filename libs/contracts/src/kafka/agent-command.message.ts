import { Static, Type } from '@sinclair/typebox';
import { EpochMs, Int, JobId, NodeId, OpenObject, OrNull, StringMap, Text } from './field-schemas';
import { messageParser } from './message-parser';

export const CommandResourcesSchema = OpenObject({
  gpus: Int(0),
  gpuModel: Type.Optional(OrNull(Text())),
  cpuCores: Int(0),
  memoryMiB: Int(0),
});

/**
 * When the control plane built the command (epoch ms, its clock). Signed with the rest: an agent
 * refuses a command older than GANTRY_COMMAND_MAX_AGE_MS, so a recorded command cannot be replayed
 * to it later (ADR 0015).
 */
const ISSUED_AT = EpochMs();

export const GangInfoSchema = OpenObject({
  size: Int(1),
  rank: Int(0),
  nodeIds: Type.Array(Text()),
  masterAddr: Type.Optional(
    Text({ minLength: 1, maxLength: 255, description: "rank 0's node address (its heartbeats' address, else its node id): MASTER_ADDR" }),
  ),
  masterPort: Type.Optional(Int(1, 65535, 'MASTER_PORT')),
});

/** Start one attempt's rank on one node (repeated as is when the node's beats lack it). */
export const RunCommandSchema = OpenObject({
  type: Type.Literal('RUN'),
  nodeId: NodeId(),
  jobId: JobId(),
  attempt: Int(1),
  issuedAt: ISSUED_AT,
  image: Text(),
  command: Type.Array(Text()),
  env: StringMap(),
  resources: CommandResourcesSchema,
  gang: GangInfoSchema,
  gpuIndices: Type.Optional(
    Type.Array(Int(0, 63), { maxItems: 64, description: 'the GPU devices this rank holds on its node: CUDA_VISIBLE_DEVICES and NVIDIA_VISIBLE_DEVICES' }),
  ),
  maxRuntimeSeconds: Type.Optional(Int(1, 31_536_000, 'the agent kills the attempt after this long and reports FAILED, reason DEADLINE_EXCEEDED')),
  arrayIndex: Type.Optional(Int(0, 9_999, "an array's child: its index, which the agent gives the job as GANTRY_ARRAY_INDEX")),
  owner: Type.Optional(
    Text({ minLength: 1, maxLength: 64, description: "the job's owner: attempts of different owners never share a uid on a node (ADR 0033)" }),
  ),
  hostIpc: Type.Optional(Type.Boolean({ description: "the job's queue lets it share the node's IPC namespace and /dev/shm; absent: false" })),
});

/** Stop one attempt on one node. */
export const KillCommandSchema = OpenObject({
  type: Type.Literal('KILL'),
  nodeId: NodeId(),
  jobId: JobId(),
  attempt: Int(1),
  issuedAt: ISSUED_AT,
  reason: Text(),
  graceMs: Type.Optional(
    Int(0, 3_600_000, "ms from SIGTERM to SIGKILL for this stop (a preemption's GANTRY_PREEMPTION_GRACE_MS); absent: the agent's GANTRY_KILL_GRACE_MS"),
  ),
});

export type RunCommand = Static<typeof RunCommandSchema>;
export type KillCommand = Static<typeof KillCommandSchema>;
/** gantry.agent-commands.v1: RUN or KILL one attempt on one node; key = nodeId. */
export type AgentCommandMessage = RunCommand | KillCommand;

/** One of the two, chosen by `type` (a discriminator: only the chosen branch is checked, and named in a failure). */
export const AgentCommandSchema = Type.Unsafe<AgentCommandMessage>({
  description: 'gantry.agent-commands.v1 (key = nodeId)',
  type: 'object',
  discriminator: { propertyName: 'type' },
  oneOf: [RunCommandSchema, KillCommandSchema],
});

/** Parses one gantry.agent-commands.v1 value. */
export const parseAgentCommand = messageParser(AgentCommandSchema);

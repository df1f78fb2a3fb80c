import { isInt, length, matches, max, maxLength, min } from 'class-validator';
import {
  CreateJobDto,
  ENV_LIMITS,
  JOB_LIMITS,
  LABEL_LIMITS,
  NO_IMAGE,
  QUEUE_NAME_PATTERN,
  ResourcesDto,
  RetryPolicyDto,
  StringRecordLimits,
  agentSetEnvNames,
  containerUnsafeEnvNames,
  isStringRecord,
  isValidJobImage,
  totalBytes,
} from '@gantry/contracts';

/*
 * The global ValidationPipe (class-transformer, then class-validator's metadata walk) is costly per
 * create (ADR 0011 has the figure). This checks CreateJobDto's rules by hand, with
 * class-validator's own checks for each rule, and builds the instances the pipe would return. It
 * may be stricter than the class, never looser: anything it does not accept goes through the pipe,
 * which gives the verdict and the field errors. create-job-parser.spec.ts checks the two agree.
 * Bodies with `dependsOn` or `array` are left to the pipe: such creates take a transaction of their own
 * (ADR 0023, 0025), which costs far more than the pipe.
 */

type Obj = Record<string, unknown>;

const JOB_KEYS = new Set(['queue', 'name', 'image', 'command', 'env', 'labels', 'resources', 'nodes', 'maxRetries', 'maxRuntimeSeconds', 'retryPolicy']);
const RESOURCE_KEYS = new Set(['gpus', 'gpuModel', 'cpuCores', 'memoryMiB']);
const RETRY_POLICY_KEYS = new Set(['maxRetries', 'backoffSeconds', 'maxBackoffSeconds', 'retryOnExitCodes']);

const isPlainObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;
const onlyKeys = (o: Obj, allowed: ReadonlySet<string>): boolean => Object.keys(o).every((k) => allowed.has(k));
const intIn = (v: unknown, lo: number, hi: number): boolean => isInt(v) && min(v, lo) && max(v, hi);
/** @IsOptional(): null and undefined skip every other rule. */
const absent = (v: unknown): v is null | undefined => v === null || v === undefined;
/** The pipe deletes `__proto__` keys before validating (and so changes what is stored): leave those bodies to it. */
const hasProtoKey = (o: object): boolean => Object.prototype.hasOwnProperty.call(o, '__proto__');

function stringRecord(v: unknown, limits: StringRecordLimits): boolean {
  return absent(v) || (isPlainObject(v) && !hasProtoKey(v) && isStringRecord(v, limits));
}

function resources(v: unknown): ResourcesDto | null | undefined | false {
  if (absent(v)) return v;
  if (!isPlainObject(v) || !onlyKeys(v, RESOURCE_KEYS)) return false;
  const { gpus, gpuModel, cpuCores, memoryMiB } = v;
  if (!intIn(gpus, 0, JOB_LIMITS.gpusMax) || !intIn(cpuCores, 0, JOB_LIMITS.cpuCoresMax) || !intIn(memoryMiB, 0, JOB_LIMITS.memoryMiBMax)) return false;
  if (!absent(gpuModel) && !length(gpuModel, 1, JOB_LIMITS.gpuModelMax)) return false;
  return Object.assign(new ResourcesDto(), v);
}

function retryPolicy(v: unknown): RetryPolicyDto | null | undefined | false {
  if (absent(v)) return v;
  if (!isPlainObject(v) || !onlyKeys(v, RETRY_POLICY_KEYS)) return false;
  const { maxRetries, backoffSeconds, maxBackoffSeconds, retryOnExitCodes } = v;
  if (!absent(maxRetries) && !intIn(maxRetries, 0, JOB_LIMITS.maxRetriesMax)) return false;
  if (!absent(backoffSeconds) && !intIn(backoffSeconds, 1, JOB_LIMITS.backoffSecondsMax)) return false;
  if (!absent(maxBackoffSeconds) && !intIn(maxBackoffSeconds, 1, JOB_LIMITS.maxBackoffSecondsMax)) return false;
  if (!absent(retryOnExitCodes)) {
    if (!Array.isArray(retryOnExitCodes) || retryOnExitCodes.length > JOB_LIMITS.retryOnExitCodesMaxItems) return false;
    if (!retryOnExitCodes.every((c) => intIn(c, JOB_LIMITS.retryExitCodeMin, JOB_LIMITS.retryExitCodeMax))) return false;
  }
  return Object.assign(new RetryPolicyDto(), v);
}

/** The CreateJobDto the global pipe would return for `body`, or null when the pipe must decide. */
export function parseCreateJob(body: unknown): CreateJobDto | null {
  if (!isPlainObject(body) || !onlyKeys(body, JOB_KEYS)) return null;
  const { queue, name, image, command, env, labels, nodes, maxRetries, maxRuntimeSeconds } = body;
  // matches() checks that the value is a string itself, whatever its declared parameter type says.
  if (!absent(queue) && !matches(queue as string, QUEUE_NAME_PATTERN)) return null;
  if (!length(name, 1, JOB_LIMITS.nameMax)) return null;
  if (!absent(image) && (!length(image, 1, JOB_LIMITS.imageMax) || !isValidJobImage(image))) return null;
  if (!Array.isArray(command) || command.length < 1 || command.length > JOB_LIMITS.commandMaxItems) return null;
  if (!command.every((arg) => maxLength(arg, JOB_LIMITS.commandArgMax))) return null;
  if (totalBytes(command) > JOB_LIMITS.commandTotalBytesMax) return null;
  if (!stringRecord(env, ENV_LIMITS) || !stringRecord(labels, LABEL_LIMITS)) return null;
  if (totalBytes(env) > JOB_LIMITS.envTotalBytesMax) return null;
  if (!absent(env) && agentSetEnvNames(env as Record<string, string>).length > 0) return null;
  if (!absent(env) && !absent(image) && image !== NO_IMAGE && containerUnsafeEnvNames(env as Record<string, string>).length > 0) return null;
  if (!absent(nodes) && !intIn(nodes, 1, JOB_LIMITS.nodesMax)) return null;
  if (!absent(maxRetries) && !intIn(maxRetries, 0, JOB_LIMITS.maxRetriesMax)) return null;
  if (!absent(maxRuntimeSeconds) && !intIn(maxRuntimeSeconds, 1, JOB_LIMITS.maxRuntimeSecondsMax)) return null;
  const r = resources(body.resources);
  if (r === false) return null;
  const retry = retryPolicy(body.retryPolicy);
  if (retry === false) return null;
  const dto = Object.assign(new CreateJobDto(), body);
  if (r) dto.resources = r;
  if (retry) dto.retryPolicy = retry;
  return dto;
}

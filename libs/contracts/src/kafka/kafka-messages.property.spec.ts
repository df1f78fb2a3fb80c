import fc from 'fast-check';
import { TSchema } from '@sinclair/typebox';
import { TOPICS } from '../topics';
import { parseAgentCommand } from './agent-command.message';
import { parseHeartbeat } from './heartbeat.message';
import { JobLifecycleSchema } from './job-lifecycle.message';
import { parseJobReport } from './job-report.message';
import { KAFKA_MESSAGE_SCHEMAS } from './kafka-message-schemas';
import { DROPS_UNKNOWN } from './field-schemas';
import { MessageParser, messageParser } from './message-parser';

/*
 * Rules every message keeps, checked over every field of every schema rather than case by case, so
 * that a field added later is covered without a new test: no string holds a NUL, and unknown
 * fields are ignored (dropped from a StoredObject, left in place elsewhere). The samples must use
 * every string field a schema has (the first test says which one is missing).
 */

const jobId = '0b7e3f0a-58d4-4c1e-9a55-3f5a3c1d2e4f';
const gpu = (index: number) => ({ index, model: 'H100', memoryMiB: 81920, memoryUsedMiB: 10, utilization: 0.5, healthy: true });
const SAMPLES: Array<{ topic: string; parse: MessageParser<unknown>; value: Record<string, unknown> }> = [
  {
    topic: TOPICS.heartbeats,
    parse: parseHeartbeat,
    value: {
      nodeId: 'gpu-0042',
      bootId: 'b1',
      seq: 3,
      sentAt: 1796000000000,
      zone: 'z',
      rack: 'r',
      address: '10.0.0.42',
      gpus: [gpu(0), gpu(1)],
      cpu: { cores: 96, utilization: 0.41 },
      memory: { totalMiB: 1048576, usedMiB: 300000 },
      running: [{ jobId, attempt: 1 }],
    },
  },
  {
    topic: TOPICS.jobReports,
    parse: parseJobReport,
    value: { nodeId: 'gpu-0042', jobId, attempt: 1, state: 'FAILED', exitCode: 3, reason: 'SIGNAL_SIGKILL', at: 1796000000000 },
  },
  {
    topic: TOPICS.agentCommands,
    parse: parseAgentCommand,
    value: {
      type: 'RUN',
      nodeId: 'gpu-0042',
      jobId,
      attempt: 1,
      issuedAt: 1796000000000,
      image: 'img',
      command: ['python', 'train.py'],
      env: { EPOCHS: '3', LR: '0.1' },
      resources: { gpus: 8, gpuModel: 'H100', cpuCores: 32, memoryMiB: 262144 },
      gang: { size: 2, rank: 0, nodeIds: ['gpu-0042', 'gpu-0043'], masterAddr: '10.0.0.42', masterPort: 29500 },
      gpuIndices: [0, 1, 2, 3, 4, 5, 6, 7],
      maxRuntimeSeconds: 3600,
      owner: 'alice',
      hostIpc: true,
    },
  },
  {
    topic: TOPICS.agentCommands,
    parse: parseAgentCommand,
    value: { type: 'KILL', nodeId: 'gpu-0042', jobId, attempt: 1, issuedAt: 1796000000000, reason: 'CANCELLED_BY_USER' },
  },
  { topic: TOPICS.jobLifecycle, parse: messageParser(JobLifecycleSchema), value: { type: 'JOB_CREATED', at: 1796000000000 } },
];

type Path = Array<string | number>;
const show = (path: Path, key = false) =>
  `${path
    .map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`))
    .join('')
    .replace(/^\./, '')}${key ? ' (key)' : ''}`;
const general = (path: Path) => path.map((p) => (typeof p === 'number' ? '[]' : p)).join('/');

/** The string fields a schema has, as general paths (array items `[]`, a map's values `*`, its keys `*key`). */
function schemaStrings(s: TSchema, path: string[] = []): string[] {
  if (s.oneOf) return (s.oneOf as TSchema[]).flatMap((b) => schemaStrings(b, path));
  const types = [s.type].flat();
  if (types.includes('string') && s.enum === undefined && s.const === undefined) return [path.join('/')];
  if (s.properties) return Object.entries(s.properties as Record<string, TSchema>).flatMap(([k, v]) => schemaStrings(v, [...path, k]));
  if (s.items) return schemaStrings(s.items as TSchema, [...path, '[]']);
  if (s.patternProperties)
    return [[...path, '*key'].join('/'), ...Object.values(s.patternProperties as Record<string, TSchema>).flatMap((v) => schemaStrings(v, [...path, '*']))];
  return [];
}

/** Every string in a value: its path, and whether it is an object key. */
function valueStrings(v: unknown, path: Path = []): Array<{ path: Path; key: boolean }> {
  if (typeof v === 'string') return [{ path, key: false }];
  if (Array.isArray(v)) return v.flatMap((x, i) => valueStrings(x, [...path, i]));
  if (typeof v === 'object' && v !== null)
    return Object.entries(v).flatMap(([k, x]) => [...(isMap(path) ? [{ path: [...path, k], key: true }] : []), ...valueStrings(x, [...path, k])]);
  return [];
}
const isMap = (path: Path) => path[path.length - 1] === 'env';
const generalOf = ({ path, key }: { path: Path; key: boolean }) =>
  isMap(path.slice(0, -1)) ? general([...path.slice(0, -1), key ? '*key' : '*']) : general(path);

/** A copy of `value` with the string at `path` (or that key) changed by `f`. */
function withString(value: unknown, at: { path: Path; key: boolean }, f: (s: string) => string): unknown {
  const copy = JSON.parse(JSON.stringify(value));
  const parent = at.path.slice(0, -1).reduce((o: any, p) => o[p], copy);
  const last = at.path[at.path.length - 1];
  if (at.key) {
    parent[f(String(last))] = parent[last];
    delete parent[last];
  } else parent[last] = f(parent[last]);
  return copy;
}

/** The schema of the object at `path` in `value` (a oneOf branch chosen by the value's `type`). */
function schemaAt(schema: TSchema, value: any, path: Path): TSchema {
  let s = schema;
  let v = value;
  const branch = () => {
    if (s.oneOf) s = (s.oneOf as TSchema[]).find((b) => b.properties?.type?.const === v.type)!;
  };
  branch();
  for (const p of path) {
    s = typeof p === 'number' ? (s.items as TSchema) : (s.properties as Record<string, TSchema>)[p];
    v = v[p];
    branch();
  }
  return s;
}

/** Every object of a value that may be given an unknown field (a map's entries are all kept, so not a map). */
function objects(v: unknown, path: Path = []): Path[] {
  if (Array.isArray(v)) return v.flatMap((x, i) => objects(x, [...path, i]));
  if (typeof v !== 'object' || v === null || isMap(path)) return [];
  return [path, ...Object.entries(v).flatMap(([k, x]) => objects(x, [...path, k]))];
}

const buf = (v: unknown) => Buffer.from(JSON.stringify(v));

describe('every Kafka message', () => {
  it('the samples use every string field of every schema', () => {
    for (const [topic, schema] of Object.entries(KAFKA_MESSAGE_SCHEMAS)) {
      const used = new Set(SAMPLES.filter((s) => s.topic === topic).flatMap((s) => valueStrings(s.value).map(generalOf)));
      expect({ topic, missing: schemaStrings(schema).filter((p) => !used.has(p)) }).toEqual({ topic, missing: [] });
    }
  });

  it.each(SAMPLES.map((s) => [`${s.topic} ${String(s.value.type ?? '')}`.trim(), s] as const))('%s: the sample parses as sent', (_n, s) => {
    expect(s.parse(buf(s.value))).toEqual({ ok: true, value: s.value });
  });

  it.each(SAMPLES.map((s) => [`${s.topic} ${String(s.value.type ?? '')}`.trim(), s] as const))(
    '%s: a NUL anywhere in any string is refused, naming the field',
    (_n, s) => {
      const strings = valueStrings(s.value);
      fc.assert(
        fc.property(fc.integer({ min: 0, max: strings.length - 1 }), fc.nat(), (i, at) => {
          const target = strings[i];
          // The NUL takes one character's place, so the string breaks no other rule (its length stays).
          const bad = withString(s.value, target, (str) => {
            const cut = at % Math.max(str.length, 1);
            return `${str.slice(0, cut)}\u0000${str.slice(cut + 1)}`;
          });
          const r = s.parse(buf(bad));
          expect(r.ok).toBe(false);
          if (!r.ok) expect(r.reason).toContain(target.key ? show(target.path.slice(0, -1)) : show(target.path));
        }),
        { numRuns: 300 },
      );
    },
  );

  it.each(SAMPLES.map((s) => [`${s.topic} ${String(s.value.type ?? '')}`.trim(), s] as const))(
    '%s: unknown fields anywhere are ignored, and dropped from what is stored whole',
    (_n, s) => {
      const targets = objects(s.value);
      const known = new Set(targets.flatMap((p) => Object.keys(p.reduce((o: any, k) => o[k], s.value))));
      fc.assert(
        fc.property(
          fc.integer({ min: 0, max: targets.length - 1 }),
          fc.string({ minLength: 1, maxLength: 8 }).filter((k) => !known.has(k) && k !== '__proto__'),
          fc.jsonValue(),
          (i, key, extra) => {
            const copy = JSON.parse(JSON.stringify(s.value));
            targets[i].reduce((o: any, k) => o[k], copy)[key] = extra;
            const dropped = (schemaAt(KAFKA_MESSAGE_SCHEMAS[s.topic], s.value, targets[i]) as { [DROPS_UNKNOWN]?: boolean })[DROPS_UNKNOWN] === true;
            expect(s.parse(buf(copy))).toEqual({ ok: true, value: dropped ? s.value : JSON.parse(JSON.stringify(copy)) });
          },
        ),
        { numRuns: 300 },
      );
    },
  );
});

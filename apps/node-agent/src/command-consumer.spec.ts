import { AgentCommandMessage } from '@gantry/contracts';
import type { ConsumedMessage } from '@gantry/messaging';
import type { Logger } from '@gantry/platform';
import type { ConsumerSpec, Consumers } from '@gantry/runtime';
import { createCommandConsumer } from './command-consumer';
import { NodeRuntime } from './node-runtime';

function setup(debug = false) {
  let spec: ConsumerSpec<AgentCommandMessage> | null = null;
  const consumers = { create: (_name: string, s: ConsumerSpec<AgentCommandMessage>) => ((spec = s), {}) } as unknown as Consumers;
  const lines: Array<{ level: string; obj: Record<string, unknown> }> = [];
  const logger = {
    isLevelEnabled: (l: string) => l === 'info' || (debug && l === 'debug'),
    info: (obj: Record<string, unknown>) => lines.push({ level: 'info', obj }),
    debug: (obj: Record<string, unknown>) => lines.push({ level: 'debug', obj }),
  } as unknown as Logger;
  const handled: AgentCommandMessage[] = [];
  const seen = new Set<string>();
  const n1 = {
    changedBy: (c: AgentCommandMessage) => !seen.has(`${c.jobId}#${c.attempt}`),
    handle: (c: AgentCommandMessage) => (handled.push(c), seen.add(`${c.jobId}#${c.attempt}`)),
  } as unknown as NodeRuntime;
  createCommandConsumer(consumers, 'a1', new Map([['n1', n1]]), logger);
  const item = (value: AgentCommandMessage): ConsumedMessage<AgentCommandMessage> => ({ value, key: value.nodeId, headers: {}, partition: 0, offset: '0' });
  return { spec: spec!, lines, handled, item };
}

const run = (nodeId: string, jobId: string): AgentCommandMessage => ({
  type: 'RUN', nodeId, jobId, attempt: 1, image: 'i', command: ['true'], env: {}, resources: { gpus: 0, cpuCores: 1, memoryMiB: 1 }, gang: { size: 1, rank: 0, nodeIds: [nodeId] },
});

describe('createCommandConsumer', () => {
  it('parses with the fast parser and dead-letters what the class refuses', () => {
    const { spec } = setup();
    expect(spec.parse(Buffer.from(JSON.stringify(run('n1', 'j'))))).toMatchObject({ ok: true });
    expect(spec.parse(Buffer.from('{"type":"RUN"}'))).toMatchObject({ ok: false });
  });

  it('logs a command that changes something at info with its trace id, a repeat only at debug, and skips other nodes', async () => {
    const { spec, lines, handled, item } = setup(true);
    expect(await spec.handleBatch([item(run('n1', 'a')), item(run('n1', 'a')), item(run('n2', 'b'))])).toEqual([]);
    expect(handled.map((c) => c.jobId)).toEqual(['a', 'a']); // the repeat is handed over too (a finished attempt re-sends its end)
    expect(lines).toEqual([
      { level: 'info', obj: { type: 'RUN', jobId: 'a', attempt: 1, nodeId: 'n1', traceId: null } },
      { level: 'debug', obj: { type: 'RUN', jobId: 'a', attempt: 1, nodeId: 'n1', repeated: true } },
    ]);
  });

  it('writes nothing for a repeat at info level', async () => {
    const { spec, lines, item } = setup(false);
    await spec.handleBatch([item(run('n1', 'a')), item(run('n1', 'a'))]);
    expect(lines.map((l) => l.level)).toEqual(['info']);
  });
});

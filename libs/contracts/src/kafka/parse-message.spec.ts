import { HeartbeatMessage } from './heartbeat.message';
import { JobReportMessage } from './job-report.message';
import { AgentCommandMessage } from './agent-command.message';
import { parseMessage } from './parse-message';

const beat = {
  nodeId: 'gpu-0042', bootId: 'b1', seq: 1, sentAt: 1796000000000, zone: 'z', rack: 'r07',
  gpus: [{ index: 0, model: 'H100', memoryMiB: 81920, memoryUsedMiB: 0, utilization: 0.5, healthy: true }],
  cpu: { cores: 96, utilization: 0.4 }, memory: { totalMiB: 1024, usedMiB: 1 }, running: [{ jobId: 'j', attempt: 1 }],
};

describe('parseMessage', () => {
  it('accepts a valid heartbeat and ignores unknown fields', () => {
    const r = parseMessage(HeartbeatMessage, JSON.stringify({ ...beat, extra: { x: 1 } }));
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(r.value.gpus?.[0].model).toBe('H100');
      expect((r.value as unknown as Record<string, unknown>).extra).toBeUndefined();
    }
  });

  it.each<[string, string | null, RegExp]>([
    ['null value', null, /empty/],
    ['not JSON', '{nope', /invalid JSON/],
    ['an array', '[]', /JSON object/],
    ['a bad nodeId', JSON.stringify({ ...beat, nodeId: '../etc' }), /nodeId/],
    ['utilization above 1', JSON.stringify({ ...beat, cpu: { cores: 1, utilization: 7 } }), /cpu.utilization/],
    ['a nested GPU error', JSON.stringify({ ...beat, gpus: [{ ...beat.gpus[0], index: -1 }] }), /gpus.0.index/],
    ['a missing field', JSON.stringify({ ...beat, running: undefined }), /running/],
  ])('rejects %s', (_n, raw, reason) => {
    const r = parseMessage(HeartbeatMessage, raw);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(reason);
  });

  it('rejects a report with an unknown state', () => {
    const r = parseMessage(JobReportMessage, JSON.stringify({ nodeId: 'n', jobId: 'j', attempt: 1, state: 'DONE', at: 1 }));
    expect(r.ok).toBe(false);
  });

  it('refuses, instead of throwing, a value class-transformer throws on (so it is dead-lettered, not retried forever)', () => {
    const raw = JSON.stringify({ type: 'KILL', nodeId: 'n', jobId: 'j', attempt: 1, reason: 'x', env: { constructor: { a: 1 } } });
    const r = parseMessage(AgentCommandMessage, raw);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(/^invalid message: /);
  });

  it('requires RUN fields only on RUN commands', () => {
    const kill = { type: 'KILL', nodeId: 'n', jobId: 'j', attempt: 1, issuedAt: 1, reason: 'CANCELLED' };
    expect(parseMessage(AgentCommandMessage, JSON.stringify(kill)).ok).toBe(true);
    expect(parseMessage(AgentCommandMessage, JSON.stringify({ ...kill, type: 'RUN' })).ok).toBe(false);
  });
});

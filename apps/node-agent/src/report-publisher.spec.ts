import { MessageProducer, NODE_ID_HEADER } from '@gantry/messaging';
import { JobReportMessage } from '@gantry/contracts';
import { ReportPublisher } from './report-publisher';
import { NodeKeys } from './identity/node-keys';

const report = (jobId: string): JobReportMessage => ({ nodeId: 'n1', jobId, attempt: 1, state: 'RUNNING', at: 1 });
const turn = () => new Promise((r) => setImmediate(r));
async function until(cond: () => boolean) {
  for (let i = 0; i < 1000 && !cond(); i++) await new Promise((r) => setTimeout(r, 1));
  expect(cond()).toBe(true);
}

function publisher() {
  const sends: Array<Array<{ key: string; value: string; headers: Record<string, string> }>> = [];
  let release: (() => void) | null = null;
  let hold = false;
  const producer = {
    send: async (_topic: string, messages: Array<{ key: string; value: string; headers: Record<string, string> }>) => {
      sends.push(messages);
      if (hold) await new Promise<void>((r) => (release = r));
    },
  } as unknown as MessageProducer;
  const keys = new NodeKeys();
  keys.set('n1', 'credential-of-n1');
  const p = new ReportPublisher(producer, keys, { warn: () => undefined });
  return { p, sends, holdSends: () => (hold = true), releaseSend: () => release?.() };
}

describe('ReportPublisher', () => {
  it('sends the reports of one turn of the event loop together, each with its trace headers and signed as its node', async () => {
    const { p, sends } = publisher();
    p.publish(report('a'), { traceparent: 'ta' });
    p.publish(report('b'), { traceparent: 'tb' });
    p.publish(report('c'), {});
    expect(sends).toHaveLength(0); // nothing sent on the report itself
    await turn();
    expect(sends).toHaveLength(1);
    expect(sends[0].map((m) => m.headers.traceparent)).toEqual(['ta', 'tb', undefined]);
    expect(sends[0].map((m) => m.headers[NODE_ID_HEADER])).toEqual(['n1', 'n1', 'n1']);
    expect(sends[0].every((m) => /^v1=[0-9a-f]{64}$/.test(m.headers['gantry-signature']))).toBe(true);
    await p.drain(1000);
    expect(p.pending).toBe(0);
  });

  it('sends what was queued during a send in the next one, in order', async () => {
    const { p, sends, holdSends, releaseSend } = publisher();
    holdSends();
    p.publish(report('a'), {});
    await turn();
    p.publish(report('b'), {});
    p.publish(report('c'), {});
    await turn();
    expect(sends).toHaveLength(1);
    releaseSend();
    await until(() => sends.length === 2);
    releaseSend();
    await p.drain(1000);
    expect(sends.map((s) => s.length)).toEqual([1, 2]);
    expect(sends[1].map((m) => JSON.parse(m.value).jobId)).toEqual(['b', 'c']);
  });

  it('holds reports until released (recovered before the credentials), then sends them; and says when each was acknowledged', async () => {
    const { p, sends } = publisher();
    const acked: string[] = [];
    p.hold();
    p.publish(report('a'), {}, () => acked.push('a'));
    await turn();
    expect(sends).toHaveLength(0);
    p.release();
    await until(() => acked.length === 1);
    expect([sends.length, acked]).toEqual([1, ['a']]);
  });
});

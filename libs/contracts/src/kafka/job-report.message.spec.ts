import { parseJobReport } from './job-report.message';

const running = { nodeId: 'sim-00042', jobId: '0b7e3f0a-58d4-4c1e-9a55-3f5a3c1d2e4f', attempt: 1, state: 'RUNNING', at: 1796000000000 };
const failed = { ...running, state: 'FAILED', at: 1796000001000, exitCode: 3, reason: 'SIGNAL_SIGKILL' };
const buf = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v));
const plain = (v: unknown) => JSON.parse(JSON.stringify(v));

describe('parseJobReport', () => {
  it.each([
    ['a RUNNING report', running],
    ['a FAILED report with exit code and reason', failed],
    ['SUCCEEDED with exit code 0', { ...running, state: 'SUCCEEDED', exitCode: 0 }],
    ['CANCELLED with a reason', { ...running, state: 'CANCELLED', reason: 'CANCELLED_BY_USER' }],
    ['the int32 bounds', { ...failed, exitCode: -2147483648 }],
    ['an empty reason', { ...failed, reason: '' }],
    ['a reason of 1024', { ...failed, reason: 'r'.repeat(1024) }],
    ['a reason of 1024 characters with a surrogate pair', { ...failed, reason: `${'r'.repeat(1023)}\u{1F600}` }],
    ['a null exit code and reason', { ...running, exitCode: null, reason: null }],
    ['a job id that is no UUID (the applier calls it unknown)', { ...running, jobId: 'not-a-uuid' }],
  ])('accepts %s, as sent', (_n, input) => expect(parseJobReport(buf(input))).toEqual({ ok: true, value: plain(input) }));

  it('ignores unknown fields (left in place, unread)', () => {
    const input = { ...running, extra: { a: 1 }, toString: 'x' };
    expect(parseJobReport(buf(input))).toEqual({ ok: true, value: input });
  });

  it.each([
    ['an unknown state', { ...running, state: 'DONE' }, 'state: must be one of RUNNING, SUCCEEDED, FAILED, CANCELLED'],
    ['a lower-case state', { ...running, state: 'running' }, 'state: must be one of'],
    ['a bad nodeId', { ...running, nodeId: '-x' }, 'nodeId: must match pattern'],
    ['a numeric nodeId', { ...running, nodeId: 42 }, 'nodeId: must be string'],
    ['an empty jobId', { ...running, jobId: '' }, 'jobId: must be 1 to 64 characters'],
    ['a jobId of 65', { ...running, jobId: 'j'.repeat(65) }, 'jobId: must be 1 to 64 characters'],
    ['a NUL in the jobId', { ...running, jobId: 'j\u0000' }, 'jobId: must be 1 to 64 characters, none of them NUL'],
    ['a NUL in the reason', { ...failed, reason: 'exit\u0000' }, 'reason: must be at most 1024 characters, none of them NUL'],
    ['attempt 0', { ...running, attempt: 0 }, 'attempt: must be >= 1'],
    ['a string attempt', { ...running, attempt: '1' }, 'attempt: must be integer'],
    ['exit code above int32', { ...failed, exitCode: 2147483648 }, 'exitCode: must be <= 2147483647'],
    ['a fractional exit code', { ...failed, exitCode: 1.5 }, 'exitCode: must be integer,null'],
    ['a reason of 1025', { ...failed, reason: 'r'.repeat(1025) }, 'reason: must be at most 1024 characters'],
    ['a numeric reason', { ...failed, reason: 5 }, 'reason: must be string,null'],
    ['negative at', { ...running, at: -1 }, 'at: must be >= 0'],
    ['at missing', { ...running, at: undefined }, 'at: is required'],
  ])('refuses %s, naming the field and the rule', (_n, input, reason) => {
    const r = parseJobReport(buf(input));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toContain(reason);
  });
});

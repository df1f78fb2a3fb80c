import fc from 'fast-check';
import { JobReportMessage } from './job-report.message';
import { parseJobReport } from './job-report-parser';
import { parseMessage } from './parse-message';

/*
 * Cost per message (node 20.20, 2 shared AMD EPYC cores, 100,000 parses after 20,000 to warm up;
 * JSON.parse included), for the reports the agent writes:
 *   RUNNING                       parseJobReport 1.3 µs   parseMessage(JobReportMessage) 19 µs
 *   FAILED with exit code, reason parseJobReport 1.4 µs   parseMessage(JobReportMessage) 20-23 µs
 */

const running = { nodeId: 'sim-00042', jobId: '0b7e3f0a-58d4-4c1e-9a55-3f5a3c1d2e4f', attempt: 1, state: 'RUNNING', at: 1796000000000 };
const failed = { ...running, state: 'FAILED', at: 1796000001000, exitCode: 3, reason: 'SIGNAL_SIGKILL' };
const buf = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v));
const plain = (v: unknown) => JSON.parse(JSON.stringify(v));

function expectSameAsClass(input: unknown) {
  const fast = parseJobReport(buf(input));
  const slow = parseMessage(JobReportMessage, buf(input));
  expect(fast.ok).toBe(slow.ok);
  if (fast.ok && slow.ok) expect(plain(fast.value)).toEqual(plain(slow.value));
  else if (!fast.ok && !slow.ok) expect(fast.reason).toBe(slow.reason);
}

describe('parseJobReport', () => {
  it.each([
    ['a RUNNING report', running],
    ['a FAILED report with exit code and reason', failed],
    ['SUCCEEDED with exit code 0', { ...running, state: 'SUCCEEDED', exitCode: 0 }],
    ['CANCELLED with a reason', { ...running, state: 'CANCELLED', reason: 'CANCELLED_BY_USER' }],
    ['the int32 bounds', { ...failed, exitCode: -2147483648 }],
    ['an empty reason', { ...failed, reason: '' }],
    ['a reason of 1024', { ...failed, reason: 'r'.repeat(1024) }],
    ['a job id that is no UUID (the applier calls it unknown)', { ...running, jobId: 'not-a-uuid' }],
    ['unknown fields (ignored, and not kept)', { ...running, extra: { a: 1 }, toString: 'x' }],
  ])('%s: accepted by the fast path, same value as the class', (_n, input) => {
    const fast = parseJobReport(buf(input));
    expect(fast.ok && fast.value instanceof JobReportMessage).toBe(false); // not the class's instance: the fast path took it
    expectSameAsClass(input);
  });

  it.each([
    ['a null exit code (the class keeps it)', { ...running, exitCode: null }],
    ['a null reason (the class keeps it)', { ...running, reason: null }],
    ['a reason of 1025 with a surrogate pair', { ...failed, reason: `${'r'.repeat(1023)}\u{1F600}` }],
    ['an unknown state', { ...running, state: 'DONE' }],
    ['a lower-case state', { ...running, state: 'running' }],
    ['a bad nodeId', { ...running, nodeId: '-x' }],
    ['a numeric nodeId', { ...running, nodeId: 42 }],
    ['an empty jobId', { ...running, jobId: '' }],
    ['a jobId of 65', { ...running, jobId: 'j'.repeat(65) }],
    ['attempt 0', { ...running, attempt: 0 }],
    ['a string attempt', { ...running, attempt: '1' }],
    ['exit code above int32', { ...failed, exitCode: 2147483648 }],
    ['a fractional exit code', { ...failed, exitCode: 1.5 }],
    ['a reason of 1025', { ...failed, reason: 'r'.repeat(1025) }],
    ['a numeric reason', { ...failed, reason: 5 }],
    ['negative at', { ...running, at: -1 }],
    ['at missing', { ...running, at: undefined }],
    ['at as an RFC 3339 string', { ...running, at: '2026-12-01T00:00:00Z' }],
    ['an array', [running]],
    ['not JSON', '{"nodeId": '],
    ['null', 'null'],
    ['a number', '42'],
  ])('%s: same verdict and value as the class', (_n, input) => expectSameAsClass(input));

  it('gives the class reason for an empty value', () => {
    expect(parseJobReport(null)).toEqual(parseMessage(JobReportMessage, null));
  });

  it('agrees with the class on random mutations of a valid report', () => {
    const paths: Array<(o: any, v: unknown) => void> = [
      (o, v) => (o.nodeId = v), (o, v) => (o.jobId = v), (o, v) => (o.attempt = v), (o, v) => (o.state = v),
      (o, v) => (o.exitCode = v), (o, v) => (o.reason = v), (o, v) => (o.at = v), (o, v) => (o.extra = v),
    ];
    const value = fc.oneof(
      fc.integer({ min: -(2 ** 32), max: 2 ** 41 }), fc.double({ noNaN: true, min: -2, max: 2 }), fc.string({ maxLength: 70 }), fc.string({ maxLength: 70, unit: 'binary' }),
      fc.constantFrom('RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED', 2147483647, -2147483649), fc.boolean(), fc.constant(null), fc.constant(undefined), fc.constant([]), fc.constant({}),
    );
    fc.assert(
      fc.property(fc.constantFrom(running, failed), fc.array(fc.tuple(fc.integer({ min: 0, max: paths.length - 1 }), value), { minLength: 1, maxLength: 3 }), (base, edits) => {
        const o = plain(base);
        for (const [i, v] of edits) paths[i](o, structuredClone(v)); // a fresh copy: the constants are shared between runs
        expectSameAsClass(o);
      }),
      { numRuns: 3000 },
    );
  });
});

import fc from 'fast-check';
import { RankState } from './attempt-outcome';
import { JobState } from './job-state';
import { JobReport, ReportedJob, foldReports } from './job-report-fold';
import { RetryPolicy } from './retry-policy';

const job = (state: JobState, ranks: Array<[string, RankState, boolean?]>, started = state !== 'SCHEDULED'): ReportedJob => ({
  state,
  attempt: 1,
  started,
  nodeIds: ranks.map(([n]) => n),
  ranks: ranks.map(([nodeId, s, released]) => ({ nodeId, state: s, released: released ?? false })),
});
const preempted = (j: ReportedJob): ReportedJob => ({ ...j, preempted: true });
const rep = (nodeId: string, state: JobReport['state'], over: Partial<JobReport> = {}): JobReport => ({ nodeId, attempt: 1, state, ...over });

describe('foldReports', () => {
  it.each<[string, ReportedJob, JobReport[], object]>([
    [
      'RUNNING then SUCCEEDED in one batch: both changes, one release, times set',
      job('SCHEDULED', [['n1', 'SCHEDULED']]),
      [rep('n1', 'RUNNING'), rep('n1', 'SUCCEEDED', { exitCode: 0 })],
      {
        outcomes: ['applied', 'applied'],
        touched: true,
        state: 'SUCCEEDED',
        start: true,
        end: { exitCode: 0, reason: null },
        ranks: [{ nodeId: 'n1', state: 'SUCCEEDED', exitCode: 0, release: true }],
        kills: [],
      },
    ],
    [
      'a repeated report is a no-op and writes nothing',
      job('RUNNING', [['n1', 'RUNNING']]),
      [rep('n1', 'RUNNING'), rep('n1', 'RUNNING')],
      { outcomes: ['noop', 'noop'], touched: false, state: 'RUNNING', events: [], ranks: [] },
    ],
    [
      'success before RUNNING was seen passes through RUNNING',
      job('SCHEDULED', [['n1', 'SCHEDULED']]),
      [rep('n1', 'SUCCEEDED', { exitCode: 0 })],
      { outcomes: ['applied'], state: 'SUCCEEDED', start: true },
    ],
    [
      'the same end repeated after success is accepted',
      job('RUNNING', [['n1', 'RUNNING']]),
      [rep('n1', 'SUCCEEDED', { exitCode: 0 }), rep('n1', 'SUCCEEDED', { exitCode: 0 })],
      { outcomes: ['applied', 'noop'], state: 'SUCCEEDED' },
    ],
    [
      'terminal absorbs: FAILED after SUCCEEDED is rejected and recorded',
      job('RUNNING', [['n1', 'RUNNING']]),
      [rep('n1', 'SUCCEEDED', { exitCode: 0 }), rep('n1', 'FAILED', { exitCode: 1 })],
      { outcomes: ['applied', 'rejected'], state: 'SUCCEEDED', end: { exitCode: 0, reason: null } },
    ],
    [
      'a failing exit code names itself',
      job('RUNNING', [['n1', 'RUNNING']]),
      [rep('n1', 'FAILED', { exitCode: 3 })],
      { outcomes: ['applied'], state: 'FAILED', end: { exitCode: 3, reason: 'EXIT_CODE_3' } },
    ],
    [
      'a deadline the agent enforced ends the job FAILED DEADLINE_EXCEEDED, killing the other ranks',
      job('RUNNING', [
        ['n1', 'RUNNING'],
        ['n2', 'RUNNING'],
      ]),
      [rep('n1', 'FAILED', { exitCode: null, reason: 'DEADLINE_EXCEEDED' })],
      {
        outcomes: ['applied'],
        state: 'FAILED',
        end: { exitCode: null, reason: 'DEADLINE_EXCEEDED' },
        kills: [{ nodeId: 'n2', attempt: 1, reason: 'GANG_ENDED' }],
      },
    ],
    [
      'an old attempt still running is answered with KILL and changes nothing',
      job('RUNNING', [['n1', 'RUNNING']]),
      [rep('n1', 'RUNNING', { attempt: 7 })],
      { outcomes: ['stale'], touched: false, kills: [{ nodeId: 'n1', attempt: 7, reason: 'STALE_ATTEMPT' }] },
    ],
    [
      'one failing rank fails the gang and kills the live rank',
      job('RUNNING', [
        ['n1', 'RUNNING'],
        ['n2', 'RUNNING'],
      ]),
      [rep('n2', 'FAILED', { exitCode: 2 })],
      {
        outcomes: ['applied'],
        state: 'FAILED',
        kills: [{ nodeId: 'n1', attempt: 1, reason: 'GANG_ENDED' }],
        ranks: [{ nodeId: 'n2', state: 'FAILED', exitCode: 2, release: true }],
      },
    ],
    [
      'a gang succeeds when its last rank does, each rank released once',
      job('RUNNING', [
        ['n1', 'RUNNING'],
        ['n2', 'RUNNING'],
      ]),
      [rep('n1', 'SUCCEEDED', { exitCode: 0 }), rep('n2', 'SUCCEEDED', { exitCode: 0 })],
      {
        outcomes: ['applied', 'applied'],
        state: 'SUCCEEDED',
        ranks: [
          { nodeId: 'n1', state: 'SUCCEEDED', exitCode: 0, release: true },
          { nodeId: 'n2', state: 'SUCCEEDED', exitCode: 0, release: true },
        ],
      },
    ],
    [
      'a rank ending after the job was cancelled frees its capacity without a state change',
      job('CANCELLED', [['n1', 'RUNNING']]),
      [rep('n1', 'CANCELLED')],
      {
        outcomes: ['applied'],
        touched: true,
        state: 'CANCELLED',
        events: [],
        end: null,
        ranks: [{ nodeId: 'n1', state: 'CANCELLED', exitCode: null, release: true }],
      },
    ],
    [
      'a rank the control plane already released is not released again',
      job('CANCELLED', [['n1', 'CANCELLED', true]]),
      [rep('n1', 'CANCELLED')],
      { outcomes: ['noop'], touched: false, ranks: [] },
    ],
  ])('%s', (_name, j, reports, expected) => {
    expect(foldReports(j, reports)).toMatchObject(expected);
  });

  const retrying: RetryPolicy = { maxRetries: 1, backoffSeconds: 10, maxBackoffSeconds: 600, retryOnExitCodes: [3] };
  const withPolicy = (j: ReportedJob, attempt = 1): ReportedJob => ({ ...j, attempt, retryPolicy: retrying });
  it.each<[string, ReportedJob, JobReport[], object]>([
    [
      'a listed exit code with a retry left goes back to QUEUED after a backoff, not FAILED',
      withPolicy(job('RUNNING', [['n1', 'RUNNING']])),
      [rep('n1', 'FAILED', { exitCode: 3 })],
      {
        outcomes: ['applied'],
        state: 'QUEUED',
        end: null,
        retry: { delayMs: 7_500 },
        kills: [],
        ranks: [{ nodeId: 'n1', state: 'FAILED', exitCode: 3, release: true }],
        events: [{ type: 'STATE_CHANGED', fromState: 'RUNNING', toState: 'QUEUED', attempt: 1, reason: 'EXIT_CODE_3; retry in 7500 ms' }],
      },
    ],
    [
      'a failure before RUNNING was seen is retried from SCHEDULED',
      withPolicy(job('SCHEDULED', [['n1', 'SCHEDULED']])),
      [rep('n1', 'FAILED', { exitCode: 3 })],
      { state: 'QUEUED', start: false, retry: { delayMs: 7_500 }, events: [{ fromState: 'SCHEDULED', toState: 'QUEUED' }] },
    ],
    [
      'an unlisted code ends the job as before',
      withPolicy(job('RUNNING', [['n1', 'RUNNING']])),
      [rep('n1', 'FAILED', { exitCode: 4 })],
      { state: 'FAILED', retry: null, end: { exitCode: 4, reason: 'EXIT_CODE_4' } },
    ],
    [
      'no retry left: FAILED',
      withPolicy(job('RUNNING', [['n1', 'RUNNING']]), 2),
      [rep('n1', 'FAILED', { exitCode: 3, attempt: 2 })],
      { state: 'FAILED', retry: null },
    ],
    [
      'a retried gang stops and gives back its other ranks at once',
      withPolicy(
        job('RUNNING', [
          ['n1', 'RUNNING'],
          ['n2', 'RUNNING'],
        ]),
      ),
      [rep('n2', 'FAILED', { exitCode: 3 })],
      {
        state: 'QUEUED',
        kills: [{ nodeId: 'n1', attempt: 1, reason: 'GANG_ENDED' }],
        ranks: [
          { nodeId: 'n2', state: 'FAILED', exitCode: 3, release: true },
          { nodeId: 'n1', state: 'RUNNING', exitCode: null, release: true },
        ],
      },
    ],
    [
      "the retried gang's other rank, reporting later, is stale (KILLed if it runs) and freed nothing twice",
      withPolicy(
        job('RUNNING', [
          ['n1', 'RUNNING'],
          ['n2', 'RUNNING'],
        ]),
      ),
      [rep('n2', 'FAILED', { exitCode: 3 }), rep('n1', 'RUNNING'), rep('n1', 'CANCELLED')],
      { outcomes: ['applied', 'stale', 'stale'], state: 'QUEUED' },
    ],
    [
      'a preempted attempt that stops goes back to QUEUED (PREEMPTED), not CANCELLED, and gives its devices back now',
      preempted(job('RUNNING', [['n1', 'RUNNING']])),
      [rep('n1', 'CANCELLED')],
      {
        outcomes: ['applied'],
        state: 'QUEUED',
        preempted: true,
        end: null,
        retry: null,
        kills: [],
        ranks: [{ nodeId: 'n1', state: 'CANCELLED', exitCode: null, release: true }],
        events: [{ type: 'STATE_CHANGED', fromState: 'RUNNING', toState: 'QUEUED', attempt: 1, reason: 'PREEMPTED' }],
      },
    ],
    [
      'a preempted attempt killed at the end of its grace (FAILED) is requeued the same way',
      withPolicy(preempted(job('RUNNING', [['n1', 'RUNNING']])), 3),
      [rep('n1', 'FAILED', { exitCode: null, attempt: 3 })],
      { state: 'QUEUED', preempted: true, retry: null, end: null },
    ],
    [
      'a preempted attempt that succeeded first just succeeds',
      preempted(job('RUNNING', [['n1', 'RUNNING']])),
      [rep('n1', 'SUCCEEDED', { exitCode: 0 })],
      { state: 'SUCCEEDED', preempted: false, end: { exitCode: 0, reason: null } },
    ],
    [
      "a preempted gang's first rank to stop is released but the job waits for the other, which keeps its devices",
      preempted(
        job('RUNNING', [
          ['n1', 'RUNNING'],
          ['n2', 'RUNNING'],
        ]),
      ),
      [rep('n2', 'CANCELLED')],
      { state: 'RUNNING', preempted: false, kills: [], events: [], ranks: [{ nodeId: 'n2', state: 'CANCELLED', exitCode: null, release: true }] },
    ],
    [
      'a preempted gang is requeued once its last rank stopped',
      preempted(
        job('RUNNING', [
          ['n1', 'RUNNING'],
          ['n2', 'CANCELLED', true],
        ]),
      ),
      [rep('n1', 'CANCELLED')],
      { state: 'QUEUED', preempted: true, ranks: [{ nodeId: 'n1', state: 'CANCELLED', exitCode: null, release: true }] },
    ],
  ])('%s', (_name, j, reports, expected) => {
    expect(foldReports(j, reports, () => 0.5)).toMatchObject(expected);
  });

  it('events follow the path, each state change once, terminal ones with the reason', () => {
    const f = foldReports(job('SCHEDULED', [['n1', 'SCHEDULED']]), [rep('n1', 'RUNNING'), rep('n1', 'FAILED', { exitCode: 9 }), rep('n1', 'RUNNING')]);
    expect(f.events.map((e) => (e.type === 'STATE_CHANGED' ? `${e.fromState}>${e.toState}${e.reason ? ` (${e.reason})` : ''}` : e.type))).toEqual([
      'SCHEDULED>RUNNING',
      'RUNNING>FAILED (EXIT_CODE_9)',
      'REPORT_REJECTED',
    ]);
  });

  it('startedAt is set only when it was not', () => {
    expect(foldReports(job('SCHEDULED', [['n1', 'SCHEDULED']], true), [rep('n1', 'RUNNING')]).start).toBe(false);
  });

  // The fold is what committing the reports one at a time would leave: the same outcomes, the same
  // final state, the same events in the same order, and every release once.
  it('equals applying the reports one at a time', () => {
    const states: JobReport['state'][] = ['RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED'];
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3 }),
        fc.array(fc.record({ node: fc.integer({ min: 0, max: 3 }), state: fc.constantFrom(...states), attempt: fc.constantFrom(1, 1, 1, 2) }), {
          maxLength: 8,
        }),
        fc.boolean(),
        (size, rs, retried) => {
          const plainStart = job(
            'SCHEDULED',
            Array.from({ length: size }, (_, i) => [`n${i}`, 'SCHEDULED'] as [string, RankState]),
            false,
          );
          // With a policy that retries exit 1, a failure sends the job back to QUEUED instead.
          const start = retried ? { ...plainStart, retryPolicy: { ...retrying, retryOnExitCodes: [1] } } : plainStart;
          const reports = rs.map((r) => rep(`n${r.node}`, r.state, { attempt: r.attempt, exitCode: r.state === 'FAILED' ? 1 : 0 }));
          const together = foldReports(start, reports, () => 0.5);
          let current = start;
          const outcomes: string[] = [];
          const events: unknown[] = [];
          const releases: string[] = [];
          for (const r of reports) {
            const one = foldReports(current, [r], () => 0.5);
            outcomes.push(...one.outcomes);
            events.push(...one.events);
            releases.push(...one.ranks.filter((w) => w.release).map((w) => w.nodeId));
            const ranks = current.ranks.map((k) => {
              const w = one.ranks.find((x) => x.nodeId === k.nodeId);
              return w ? { ...k, state: w.state, released: k.released || w.release } : k;
            });
            current = { ...current, state: one.state, started: current.started || one.start, ranks };
          }
          expect(together.outcomes).toEqual(outcomes);
          expect(together.state).toBe(current.state);
          expect(together.events).toEqual(events);
          expect(
            together.ranks
              .filter((w) => w.release)
              .map((w) => w.nodeId)
              .sort(),
          ).toEqual(releases.sort());
        },
      ),
    );
  });
});

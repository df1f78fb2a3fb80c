import type { Job, JobStreamEvent } from '@gantry/client';
import { applyEvent, insertJob } from './jobs-table-model';

const job = (id: string, more: Partial<Job> = {}): Job => ({
  id,
  owner: 'team-a',
  queue: 'default',
  name: id,
  image: 'none',
  command: ['true'],
  env: {},
  labels: {},
  resources: { gpus: 0, gpuModel: null, cpuCores: 1, memoryMiB: 64 },
  nodes: 1,
  maxRetries: 0,
  state: 'QUEUED',
  cancelRequested: false,
  attempt: 0,
  pendingReason: null,
  exitCode: null,
  reason: null,
  nodeIds: [],
  placements: [],
  dependsOn: [],
  retryPolicy: { maxRetries: 0, backoffSeconds: 10, maxBackoffSeconds: 600, retryOnExitCodes: [] },
  notBefore: null,
  maxRuntimeSeconds: null,
  createdAt: `2026-12-02T10:00:0${id.slice(-1)}.000Z`,
  updatedAt: '2026-12-02T10:00:00.000Z',
  startedAt: null,
  finishedAt: null,
  ...more,
});
const changed = (jobId: string, fromState: Job['state'], toState: Job['state'], attempt = 1, seq = 2): JobStreamEvent =>
  ({ jobId, seq, type: 'STATE_CHANGED', at: '2026-12-02T10:01:00.000Z', fromState, toState, attempt, nodeIds: ['n1'] }) as JobStreamEvent;

describe('applyEvent', () => {
  it('moves a row along a state change it is ready for, and records when it started and ended', () => {
    let rows = [job('j1')];
    rows = applyEvent(rows, changed('j1', 'QUEUED', 'SCHEDULED'), {}).rows;
    rows = applyEvent(rows, changed('j1', 'SCHEDULED', 'RUNNING'), {}).rows;
    expect(rows[0]).toMatchObject({ state: 'RUNNING', attempt: 1, nodeIds: ['n1'], startedAt: '2026-12-02T10:01:00.000Z', finishedAt: null });
    rows = applyEvent(rows, changed('j1', 'RUNNING', 'SUCCEEDED'), {}).rows;
    expect(rows[0]).toMatchObject({ state: 'SUCCEEDED', finishedAt: '2026-12-02T10:01:00.000Z' });
  });

  it.each([
    ['an event older than the listing (the row is already past it)', job('j1', { state: 'RUNNING', attempt: 1 }), changed('j1', 'QUEUED', 'SCHEDULED')],
    ['an earlier attempt than the row shows', job('j1', { state: 'RUNNING', attempt: 2 }), changed('j1', 'RUNNING', 'QUEUED', 1)],
    ['a terminal row (terminal states absorb)', job('j1', { state: 'SUCCEEDED', attempt: 1 }), changed('j1', 'RUNNING', 'FAILED')],
  ])('ignores %s', (_c, row, event) => {
    const out = applyEvent([row], event, {});
    expect(out.rows[0]).toBe(row);
    expect(out.fetch).toBeNull();
  });

  it('replays a retried attempt in order: lost, queued again, placed again', () => {
    let rows = [job('j1', { state: 'RUNNING', attempt: 1 })];
    for (const e of [changed('j1', 'RUNNING', 'QUEUED', 1), changed('j1', 'QUEUED', 'SCHEDULED', 2), changed('j1', 'SCHEDULED', 'RUNNING', 2)])
      rows = applyEvent(rows, e, {}).rows;
    expect(rows[0]).toMatchObject({ state: 'RUNNING', attempt: 2 });
  });

  it('marks a cancel request', () => {
    const e = { jobId: 'j1', seq: 3, type: 'CANCEL_REQUESTED', at: '2026-12-02T10:02:00.000Z' } as JobStreamEvent;
    expect(applyEvent([job('j1', { state: 'RUNNING' })], e, {}).rows[0].cancelRequested).toBe(true);
  });

  it('drops a row that leaves the filtered state, and asks for a job that enters it', () => {
    expect(applyEvent([job('j1', { state: 'RUNNING' })], changed('j1', 'RUNNING', 'SUCCEEDED'), { state: 'RUNNING' }).rows).toEqual([]);
    expect(applyEvent([], changed('j2', 'SCHEDULED', 'RUNNING'), { state: 'RUNNING' }).fetch).toBe('j2');
    expect(applyEvent([], changed('j2', 'SCHEDULED', 'RUNNING'), {}).fetch).toBeNull();
  });

  it.each([
    [{}, 'j9'],
    [{ state: 'QUEUED' as const }, 'j9'],
    [{ state: 'RUNNING' as const }, null],
  ])('asks for a created job unless the filter excludes new jobs (%j)', (filter, fetch) => {
    const created = { jobId: 'j9', seq: 1, type: 'CREATED', at: '2026-12-02T10:00:09.000Z', toState: 'QUEUED' } as JobStreamEvent;
    expect(applyEvent([job('j1')], created, filter).fetch).toBe(fetch);
  });
});

describe('insertJob', () => {
  const rows = [job('j1'), job('j3')];

  it('places a job at its (createdAt, id) position', () => {
    expect(insertJob(rows, job('j2'), {}, false)!.map((r) => r.id)).toEqual(['j1', 'j2', 'j3']);
    expect(insertJob(rows, job('j4'), {}, true)!.map((r) => r.id)).toEqual(['j1', 'j3', 'j4']);
  });

  it('leaves a job beyond the listed pages to the next page', () => {
    expect(insertJob(rows, job('j4'), {}, false)).toBeNull();
  });

  it('refuses a job outside the filter, and replaces one already listed', () => {
    expect(insertJob(rows, job('j4', { queue: 'other' }), { queue: 'default' }, true)).toBeNull();
    expect(insertJob(rows, job('j3', { state: 'RUNNING' }), {}, true)!.map((r) => r.state)).toEqual(['QUEUED', 'RUNNING']);
  });
});

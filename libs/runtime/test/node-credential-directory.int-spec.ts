import { DataSource } from 'typeorm';
import { autocommit, enrollNodes, revokeNodeEnrollment } from '@gantry/persistence';
import { NodeCredentialDirectory } from '@gantry/runtime';
import { openDataSource, uniqueTag } from '@gantry/testing';

/**
 * The enrollments a consumer verifies node messages against (ADR 0015), on the real database: a
 * message from a node enrolled a moment ago asks the directory to read what changed, and must then
 * find the node, however many messages ask at once.
 */
let ds: DataSource;
let directory: NodeCredentialDirectory;
const quiet = { warn: () => undefined };

beforeAll(async () => {
  ds = await openDataSource();
  // No periodic reads during the tests (an hour apart): only what refreshSoon reads.
  directory = new NodeCredentialDirectory(ds, 'a-secret-of-sixteen-characters', quiet, 3_600_000);
  await directory.start();
});
afterAll(async () => {
  directory.stop();
  await ds.destroy();
});
afterEach(() => jest.restoreAllMocks());

describe('NodeCredentialDirectory.refreshSoon', () => {
  it('finds a node enrolled before the call, for a caller that asks while another read is in flight in the same millisecond', async () => {
    const node = uniqueTag('enrolled');
    expect(directory.keyOf(node)).toEqual({ refused: 'unknown-node' });
    await enrollNodes(autocommit(ds), [node], new Date());
    // Two messages of one fetch, from two partitions, ask in the same millisecond: the second asks
    // once the first's read has started, before it has finished.
    jest.spyOn(Date, 'now').mockReturnValue(Date.now());
    const first = directory.refreshSoon();
    for (let i = 0; i < 5; i++) await Promise.resolve();
    await directory.refreshSoon();
    expect(directory.keyOf(node)).toHaveProperty('key');
    await first;
  });

  it('sees a revocation committed before the call, and callers at once share reads', async () => {
    const node = uniqueTag('revoked');
    await enrollNodes(autocommit(ds), [node], new Date());
    await directory.refreshSoon();
    expect(directory.keyOf(node)).toHaveProperty('key');
    await revokeNodeEnrollment(autocommit(ds), node, new Date());
    const reads = jest.spyOn(directory, 'refresh');
    await Promise.all(Array.from({ length: 50 }, () => directory.refreshSoon()));
    expect(directory.keyOf(node)).toEqual({ refused: 'revoked' });
    // Fifty callers at once: the read each needs, shared (one, or two where one had just started).
    expect(reads.mock.calls.length).toBeLessThanOrEqual(2);
  });
});

import { v7 as uuidv7 } from 'uuid';

/**
 * A new job id: a UUID version 7 (RFC 9562), whose first 48 bits are the creation time in
 * milliseconds, so ids issued later sort later (and, from one process, strictly so: the library
 * keeps a counter within a millisecond). Random (version 4) ids put every insert into the jobs,
 * job_events, attempt_nodes and outbox-side indexes at a random leaf page: pages the buffer cache
 * must hold or read back, and write whole to the WAL again after each checkpoint. Time-ordered ids
 * keep those inserts on the few recent pages (ADR 0029). Ids stay opaque to clients.
 */
export function newJobId(): string {
  return uuidv7();
}

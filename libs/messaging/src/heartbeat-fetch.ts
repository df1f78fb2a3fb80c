/**
 * How the readers of gantry.heartbeats.v1 (the ingester, the reconciler) fetch: the broker answers
 * once 256 KiB of beats are there, or after 250 ms. Beats come as a steady stream of small
 * messages; fetched as they arrive they came a few beats per partition, and each batch's own cost
 * (the fetch, the ingester's Redis pipeline, the reconciler's database read) was paid that often
 * (ADR 0030 has the figures). A beat then waits up to 250 ms more before it is written: nothing
 * judges liveness at that grain (suspect after 15 s by default). A large fleet fills 256 KiB
 * sooner, so it waits less.
 */
export const HEARTBEAT_FETCH = { minBytes: 256 * 1024, maxWaitTimeInMs: 250 } as const;

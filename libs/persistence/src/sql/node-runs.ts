import type { RankRun } from '@gantry/domain';
import { Sql, prepared } from './sql';

/** The live ranks on a node, read with the row version (changed_xid) they go with. */
export interface NodeRuns {
  changedXid: string;
  ranks: RankRun[];
}

// One statement, so the ranks and the node's changed_xid are of one snapshot: a placement or a
// release writes both in one transaction. A rank's start is its job's started_at only while that
// job runs this attempt (a retry keeps the last attempt's until it starts again).
const NODE_RUNS = prepared(`SELECT n.id, n.changed_xid::text AS xid, a.gpus, a.cpu_cores, a.memory_mib, j.max_runtime_seconds,
       CASE WHEN j.state = 'RUNNING' AND j.attempt = a.attempt THEN j.started_at END AS started_at
     FROM nodes n
     LEFT JOIN attempt_nodes a ON a.node_id = n.id AND a.released_at IS NULL
     LEFT JOIN jobs j ON j.id = a.job_id
     WHERE n.id = ANY($1::text[])`);

/**
 * The live ranks on each of `nodeIds` (runtime-aware backfill, ADR 0008): what each holds, when it
 * started and its job's maxRuntimeSeconds. The scheduler reads only a reservation's nodes (one
 * gang's worth), through attempt_nodes' index of live ranks by node.
 */
export async function loadNodeRuns(sql: Sql, nodeIds: readonly string[]): Promise<Map<string, NodeRuns>> {
  const out = new Map<string, NodeRuns>();
  if (nodeIds.length === 0) return out;
  const rows = await sql.rows<Record<string, any>>(NODE_RUNS, [[...nodeIds]]);
  for (const r of rows) {
    let entry = out.get(r.id);
    if (!entry) out.set(r.id, (entry = { changedXid: r.xid, ranks: [] }));
    if (r.gpus === null) continue; // no live rank
    entry.ranks.push({
      gpus: r.gpus,
      cpuCores: r.cpu_cores,
      memoryMiB: Number(r.memory_mib),
      startedAtMs: r.started_at === null ? null : new Date(r.started_at).getTime(),
      maxRuntimeSeconds: r.max_runtime_seconds,
    });
  }
  return out;
}

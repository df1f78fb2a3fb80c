import { ClusterHeatmapView, HeatmapRackView } from '@gantry/contracts';
import { HealthThresholds, nodeHealth } from '@gantry/domain';
import { NodeGridRow, UtilisationContributionFields } from '@gantry/persistence';

const HEALTH_LETTER = { HEALTHY: 'H', DEGRADED: 'D', UNHEALTHY: 'U' } as const;

/** Thousandths summed over `count` things -> a whole percent, or -1 when there is nothing to average. */
function percent(milliSum: number, count: number): number {
  return count > 0 ? Math.min(100, Math.max(0, Math.round(milliSum / count / 10))) : -1;
}

/**
 * The heatmap's columnar answer from the grid (Postgres, ordered by zone, rack, id) and, per grid
 * row, when the node was last heard and its last known utilisation contribution (Redis). Health is
 * judged exactly as for the node resource (nodeHealth).
 */
export function buildHeatmap(
  grid: readonly NodeGridRow[],
  lastSeen: ReadonlyArray<number | null>,
  contributions: ReadonlyArray<UtilisationContributionFields | null>,
  nowMs: number,
  thresholds: HealthThresholds,
): ClusterHeatmapView {
  const n = grid.length;
  const racks: HeatmapRackView[] = [];
  const nodeIds = new Array<string>(n);
  const health = new Array<string>(n);
  const cordoned: number[] = [];
  const gpusTotal = new Array<number>(n);
  const gpusAllocated = new Array<number>(n);
  const gpuUtil = new Array<number>(n);
  const cpuUtil = new Array<number>(n);
  let current: HeatmapRackView | null = null;
  for (let i = 0; i < n; i++) {
    const row = grid[i];
    if (!current || current.zone !== row.zone || current.rack !== row.rack) {
      current = { zone: row.zone, rack: row.rack, nodes: 0 };
      racks.push(current);
    }
    current.nodes++;
    nodeIds[i] = row.id;
    health[i] = HEALTH_LETTER[nodeHealth(lastSeen[i] ?? null, nowMs, thresholds)];
    if (row.cordoned) cordoned.push(i);
    gpusTotal[i] = row.gpusTotal;
    gpusAllocated[i] = row.gpusAllocated;
    const c = contributions[i];
    gpuUtil[i] = c ? percent(c.gpuUtilMilli, c.gpus) : -1;
    cpuUtil[i] = c ? percent(c.cpuUtilMilli, 1) : -1;
  }
  return { at: new Date(nowMs).toISOString(), racks, nodeIds, health: health.join(''), cordoned, gpusTotal, gpusAllocated, gpuUtil, cpuUtil };
}

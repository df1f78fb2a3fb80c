/**
 * What one node adds to the cluster's running utilisation sums. Integers (thousandths), so the
 * sums can be kept with exact increments: adding and later subtracting a contribution returns the
 * sum to where it was, which floating-point increments would not.
 */
export interface UtilisationContribution {
  gpus: number;
  /** Sum over the node's GPUs of utilisation x 1000. */
  gpuUtilMilli: number;
  /** CPU utilisation x 1000. */
  cpuUtilMilli: number;
}

export interface UtilisationSums extends UtilisationContribution {
  /** Nodes whose contribution is in the sums. */
  nodes: number;
}

const milli = (u: number) => Math.round(Math.min(1, Math.max(0, u)) * 1000);

export function utilisationContribution(gpus: ReadonlyArray<{ utilization: number }>, cpuUtilization: number): UtilisationContribution {
  let gpuUtilMilli = 0;
  for (const g of gpus) gpuUtilMilli += milli(g.utilization);
  return { gpus: gpus.length, gpuUtilMilli, cpuUtilMilli: milli(cpuUtilization) };
}

/** Averages (0..1) over the nodes in the sums; null when there is nothing to average. */
export function averageUtilisation(s: UtilisationSums): { gpu: number | null; cpu: number | null } {
  const round = (v: number) => Math.round(v * 1000) / 1000;
  return {
    gpu: s.gpus > 0 ? round(s.gpuUtilMilli / s.gpus / 1000) : null,
    cpu: s.nodes > 0 ? round(s.cpuUtilMilli / s.nodes / 1000) : null,
  };
}

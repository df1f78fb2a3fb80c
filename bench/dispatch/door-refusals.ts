import { scrapeMetrics, sumByLabel } from '../heartbeats/prometheus-text';

/** The gateway's refusals of creates at its door so far (gantry_creates_shed_total by reason). */
export interface DoorRefusals {
  /** The adaptive limit on creates in progress. */
  door: number;
  /** The event-loop shedding (GANTRY_SHED_EVENT_LOOP_DELAY_MS). */
  eventLoop: number;
}

export async function doorRefusals(gatewayUrl: string): Promise<DoorRefusals> {
  const byReason = sumByLabel(await scrapeMetrics(gatewayUrl), 'gantry_creates_shed_total', 'reason');
  return { door: byReason.get('in-flight') ?? 0, eventLoop: byReason.get('event-loop') ?? 0 };
}

/** What was refused between two readings. */
export function refusalsBetween(before: DoorRefusals, after: DoorRefusals): DoorRefusals {
  return { door: after.door - before.door, eventLoop: after.eventLoop - before.eventLoop };
}

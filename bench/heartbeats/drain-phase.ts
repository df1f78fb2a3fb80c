/**
 * The capacity phase of bench:heartbeats: what the ingester and the reconciler take in when the
 * beats were sent beforehand, so that the load generator's CPU is not on the machine while they
 * work. On a real fleet every agent runs on its own host; here one simulator process for 50,000
 * nodes takes a third of the two cores, and the live phase measures the machine, not the control
 * plane. Steps: stop the ingester and the reconciler (they commit where they were); let the agent
 * send for `fillS` seconds; stop it; start both readers again and time how fast they work through
 * the backlog, until each group has less than 1 % of it left (or `timeoutS` passes).
 */
import { ServiceProcess } from '@gantry/stack';
import { Sample, scrapeMetrics, sum } from './prometheus-text';

export interface DrainOptions {
  fillS: number;
  timeoutS: number;
  ingester: ServiceProcess;
  reconciler: ServiceProcess;
  agent: ServiceProcess;
  /** CPU seconds so far of the named processes (the broker and Redis included). */
  cpu: () => Record<string, number>;
}

export interface DrainResult {
  backlogBeats: number;
  fillS: number;
  /** From both readers ready to the ingester's group under 1 % of the backlog. */
  ingesterDrainS: number | null;
  reconcilerDrainS: number | null;
  /** Beats the ingester admitted (written or judged not newest) per second while draining. */
  ingesterConsumedPerS: number | null;
  ingesterWrittenPerS: number | null;
  /** Cores per process while the ingester drained. */
  cores: Record<string, number>;
  /** CPU per beat consumed by the ingester, per process, in microseconds. */
  usPerBeat: Record<string, number>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The consumer groups that read the heartbeat topic (apps/heartbeat-ingester, apps/reconciler). */
export const HEARTBEAT_GROUPS = { ingester: 'gantry-heartbeat-ingester', reconciler: 'gantry-reconciler-heartbeats' } as const;

/** Messages behind on the heartbeat topic for one group, as its consumer last saw (null before its first batch). */
function lagOf(samples: Sample[], group: string): number | null {
  const own = samples.filter((s) => s.name === 'gantry_consumer_lag' && s.labels.group === group);
  return own.length ? own.reduce((a, s) => a + s.value, 0) : null;
}

export async function drainPhase(o: DrainOptions): Promise<DrainResult> {
  await Promise.all([o.ingester.stop(), o.reconciler.stop()]);
  const sent0 = sum(await scrapeMetrics(o.agent.url), 'gantry_agent_heartbeats_sent_total');
  await sleep(o.fillS * 1000);
  const backlog = sum(await scrapeMetrics(o.agent.url), 'gantry_agent_heartbeats_sent_total') - sent0;
  await o.agent.stop();

  o.ingester.start();
  o.reconciler.start();
  await Promise.all([o.ingester.ready(180_000), o.reconciler.ready(180_000)]);
  const t0 = Date.now();
  const cpu0 = o.cpu();
  const m0 = await scrapeMetrics(o.ingester.url);
  const done = (lag: number | null) => lag !== null && lag < backlog / 100;
  let ingesterAt: number | null = null;
  let reconcilerAt: number | null = null;
  let cpu1 = cpu0;
  let m1 = m0;
  while ((ingesterAt === null || reconcilerAt === null) && Date.now() - t0 < o.timeoutS * 1000) {
    await sleep(500);
    const [mi, mr] = await Promise.all([scrapeMetrics(o.ingester.url), scrapeMetrics(o.reconciler.url)]);
    if (ingesterAt === null && done(lagOf(mi, HEARTBEAT_GROUPS.ingester))) {
      ingesterAt = Date.now();
      cpu1 = o.cpu();
      m1 = mi;
    }
    if (reconcilerAt === null && done(lagOf(mr, HEARTBEAT_GROUPS.reconciler))) reconcilerAt = Date.now();
  }
  const seconds = ingesterAt === null ? null : (ingesterAt - t0) / 1000;
  const consumed = sum(m1, 'gantry_heartbeat_batch_size_sum') - sum(m0, 'gantry_heartbeat_batch_size_sum');
  const written = sum(m1, 'gantry_heartbeats_ingested_total') - sum(m0, 'gantry_heartbeats_ingested_total');
  const cores: Record<string, number> = {};
  const usPerBeat: Record<string, number> = {};
  for (const k of Object.keys(cpu0)) {
    const used = cpu1[k] - cpu0[k];
    if (seconds) cores[k] = Math.round((used / seconds) * 100) / 100;
    if (consumed) usPerBeat[k] = Math.round((used / consumed) * 1e7) / 10;
  }
  return {
    backlogBeats: backlog,
    fillS: o.fillS,
    ingesterDrainS: seconds,
    reconcilerDrainS: reconcilerAt === null ? null : (reconcilerAt - t0) / 1000,
    ingesterConsumedPerS: seconds ? Math.round(consumed / seconds) : null,
    ingesterWrittenPerS: seconds ? Math.round(written / seconds) : null,
    cores,
    usPerBeat,
  };
}

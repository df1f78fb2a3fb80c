/**
 * Issue 12: the scheduler's peak memory while it places one 1,024-rank gang whose env is 64 KiB.
 * The RUNs of such a gang hold the env 1,024 times over (64 MiB of JSON); the scheduler writes one
 * dispatch row and its relay builds and sends the RUNs in bounded chunks (ADR 0015), so its peak
 * must stay well under 512 MiB. Peak = VmHWM of the scheduler process (its high-water mark since it
 * started, which includes the 50,000-node snapshot it holds anyway).
 */
import { readFileSync } from 'node:fs';
import { CommandWatch } from './command-watch';

export interface GangMemory {
  ranks: number;
  envBytes: number;
  /** The scheduler's VmRSS and VmHWM before the gang was submitted, MiB. */
  before: { rssMiB: number; hwmMiB: number };
  /** After every rank's RUN was seen on Kafka. */
  after: { rssMiB: number; hwmMiB: number };
  /** Submit -> the last rank's RUN published, s. */
  dispatchedAfterS: number | null;
}

function memoryOf(pid: number): { rssMiB: number; hwmMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMiB: Math.round(kib('VmRSS') / 1024), hwmMiB: Math.round(kib('VmHWM') / 1024) };
}

/** A gang of `ranks` whole H100 nodes whose env totals ~64 KiB (two values of 32,000 characters). */
export function bigGangJob(name: string, ranks: number): { body: Record<string, unknown>; envBytes: number } {
  const env = { PAYLOAD_A: 'a'.repeat(32_000), PAYLOAD_B: 'b'.repeat(32_000), SIM_DURATION_MS: '600000' };
  const envBytes = Object.entries(env).reduce((n, [k, v]) => n + k.length + v.length, 0);
  return {
    body: { name, image: 'none', command: ['true'], env, resources: { gpus: 8, gpuModel: 'H100', cpuCores: 1, memoryMiB: 1024 }, nodes: ranks },
    envBytes,
  };
}

export async function measureGangMemory(
  schedulerPid: number,
  submit: () => Promise<string>,
  watch: CommandWatch,
  ranks: number,
  envBytes: number,
  until: (what: string, probe: () => Promise<boolean>) => Promise<unknown>,
): Promise<GangMemory> {
  const before = memoryOf(schedulerPid);
  const t0 = Date.now();
  const id = await submit();
  let dispatchedAfterS: number | null = null;
  await until(`every RUN of the ${ranks}-rank gang seen`, async () => watch.dispatchedAt(id) !== null)
    .then(() => (dispatchedAfterS = ((watch.dispatchedAt(id) ?? Date.now()) - t0) / 1000))
    .catch(() => undefined);
  return { ranks, envBytes, before, after: memoryOf(schedulerPid), dispatchedAfterS };
}

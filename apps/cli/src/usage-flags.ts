import type { UsageQuery } from '@gantry/client';
import { UsageError } from './cli-error';

export interface UsageFlags {
  from: string;
  to?: string;
  by?: string;
  granularity: NonNullable<UsageQuery['granularity']>;
}

const HOUR_MS = 3_600_000;

/**
 * `gantry usage` flags as GET /v1/usage's query: --to defaults to the next whole UTC hour, so that
 * "up to now" is a valid range (the gateway wants whole hours) and running attempts count up to now.
 * The gateway checks the rest and says what is wrong.
 */
export function usageQueryFromFlags(flags: UsageFlags, nowMs: number): UsageQuery {
  if (flags.by !== undefined && flags.by.trim() === '') throw new UsageError('--by needs one or more of owner, queue, gpuModel');
  const to = flags.to ?? new Date(Math.floor(nowMs / HOUR_MS) * HOUR_MS + HOUR_MS).toISOString();
  return { from: flags.from, to, granularity: flags.granularity, ...(flags.by ? { groupBy: flags.by.replace(/\s+/g, '') } : {}) };
}

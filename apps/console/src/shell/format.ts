/** How times, sizes and ids read on every page. Pure. */

/**
 * The last 8 characters: job ids are time-ordered UUIDs (ADR 0029) whose first characters are the
 * creation time, the same for every job of the same minute; their end is random.
 */
export function shortId(id: string): string {
  return id.length > 8 ? id.slice(-8) : id;
}

/** "14:03:27" today, "2 Dec 14:03" otherwise; the full ISO time goes in a title. */
export function time(iso: string | null | undefined, now: Date = new Date()): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '—';
  const sameDay = d.toDateString() === now.toDateString();
  return sameDay
    ? d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false })
    : d.toLocaleString(undefined, { day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit', hour12: false });
}

/** "3 s", "4 min", "2 h 5 min": how long ago or how long something took. */
export function duration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '—';
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  return `${h} h ${m % 60} min`;
}

export function mib(v: number): string {
  if (v >= 1024 * 1024) return `${(v / 1024 / 1024).toFixed(1)} TiB`;
  if (v >= 1024) return `${(v / 1024).toFixed(v >= 10 * 1024 ? 0 : 1)} GiB`;
  return `${v} MiB`;
}

export function percent(fraction: number | null | undefined): string {
  return fraction === null || fraction === undefined ? '—' : `${Math.round(fraction * 100)} %`;
}

export function count(n: number): string {
  return n.toLocaleString('en-US');
}

/** What a pending reason means, in a sentence (the reasons of the scheduler, docs/scheduling.md). */
export function pendingReasonText(reason: string | null | undefined): string | null {
  if (!reason) return null;
  const [code, detail] = reason.split(':');
  const texts: Record<string, string> = {
    NO_MATCHING_NODES: 'No node could ever fit it (GPU model or size).',
    INSUFFICIENT_CAPACITY: `Nodes that fit exist, but not enough ${detail ?? 'capacity'} is free now.`,
    GANG_WAITING: 'Waiting until every node of its gang is free at once.',
    QUOTA_EXCEEDED: "Its queue's GPU quota is in use.",
    PRIORITY: 'It fits, but a higher priority band took or reserved the capacity.',
    BACKFILL_WINDOW: 'It fits nodes held for a job ahead, but its maxRuntimeSeconds is absent or ends after that job is estimated to start.',
    BACKOFF: 'Waiting before its next attempt (retry backoff).',
    DEPENDENCY: 'Waiting for the jobs it depends on.',
  };
  return texts[code] ?? null;
}

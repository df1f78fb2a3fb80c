/** setTimeout's longest wait (about 24.8 days); a longer one fires at once, so longer deadlines re-arm. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

export interface DeadlineTimer {
  cancel(): void;
}

/**
 * Calls `expired` once, `ms` from now (maxRuntimeSeconds goes up to a year, past what one
 * setTimeout can wait). Unref'd: a pending deadline never keeps the agent alive.
 */
export function startDeadline(ms: number, expired: () => void, now: () => number = Date.now): DeadlineTimer {
  const at = now() + ms;
  let timer: NodeJS.Timeout;
  const arm = () => {
    const left = at - now();
    if (left <= 0) return expired();
    timer = setTimeout(arm, Math.min(left, MAX_TIMEOUT_MS));
    timer.unref();
  };
  arm();
  return { cancel: () => clearTimeout(timer) };
}

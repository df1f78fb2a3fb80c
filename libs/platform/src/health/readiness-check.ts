/** One dependency a service needs before it is ready (Postgres, Redis, Kafka, a joined consumer). */
export interface ReadinessCheck {
  name: string;
  /** Resolves when the dependency answers; rejects (or times out) otherwise. */
  check(): Promise<void>;
}

/** What READINESS_CHECKS provides: the current list, read on every probe. */
export interface ReadinessSource {
  checks(): ReadinessCheck[];
}

export const READINESS_CHECKS = Symbol('READINESS_CHECKS');

/** Rejects if `p` takes longer than `ms`, so one hung dependency cannot hang /readyz. */
export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
    }),
  ]);
}

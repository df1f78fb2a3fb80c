import 'reflect-metadata';
import { IsInt, IsNumber, IsOptional, IsString, Max, Min } from 'class-validator';
import { StatefulServiceEnv, defaultDetectorIntervalMs, defaultIngestStallMs, defaultPhantomGraceMs } from '@gantry/platform';

export class ReconcilerEnv extends StatefulServiceEnv {
  /** Job-report partitions consumed at once by this replica; their batches share each write (one at a time). */
  @IsInt() @Min(1) @Max(64) GANTRY_REPORT_CONCURRENCY: number = 6;
  /**
   * Pacing under load (loadGapMs): after a write of n reports, the next starts no sooner than
   * min(n x GANTRY_REPORT_GAP_PER_REPORT_MS, GANTRY_REPORT_MAX_GAP_MS) after it began; reports that
   * arrive meanwhile go together. A write's planning and commit cost about the same for 12 reports
   * as for 50; a lone report waits at most one report's gap. Reports batch only when they come
   * faster than one per gap: 8 ms puts that at 125 reports/s, about 60 jobs/s (ADR 0030). 0 max: off.
   */
  @IsInt() @Min(0) @Max(100) GANTRY_REPORT_GAP_PER_REPORT_MS: number = 8;
  /** The most a write's pacing gap may be, ms (see GANTRY_REPORT_GAP_PER_REPORT_MS); 0 turns pacing off. */
  @IsInt() @Min(0) @Max(1000) GANTRY_REPORT_MAX_GAP_MS: number = 50;
  /** How long a RUNNING attempt may be missing from its node's beats before it is lost, ms; default three heartbeat periods, at least 15000. */
  @IsInt() @Min(100) GANTRY_PHANTOM_GRACE_MS: number = 15000;
  /** How often the failure detector looks for dead nodes, ms; default a twentieth of GANTRY_NODE_DEAD_MS, at least 2000. */
  @IsInt() @Min(100) GANTRY_DETECTOR_INTERVAL_MS: number = 2000;
  /** Newest beat older than this means ingestion has stalled: nobody is judged dead, ms; default two heartbeat periods, at least 10000. */
  @IsInt() @Min(100) GANTRY_INGEST_STALL_MS: number = 10000;
  /** Lifetime of the detector's leader lease, ms. */
  @IsInt() @Min(500) GANTRY_LEADER_LEASE_MS: number = 10000;
  /** Nodes declared dead per second at most (the token bucket's refill rate). */
  @IsNumber() @Min(0.01) GANTRY_EVICTIONS_PER_SECOND: number = 5;
  /** Nodes that may be declared dead at once (the token bucket's size). */
  @IsInt() @Min(1) GANTRY_EVICTION_BURST: number = 20;
  /** Share of a rack silent at once that holds it as a partition (racks of at least GANTRY_PARTITION_MIN_RACK nodes). */
  @IsNumber() @Min(0) @Max(1) GANTRY_PARTITION_SHARE: number = 0.5;
  /** Smallest rack that can be held as a partition. */
  @IsInt() @Min(1) GANTRY_PARTITION_MIN_RACK: number = 4;
  /**
   * How long the nodes of a rack held as a partition stay held, ms; after it, those still silent are
   * evicted at the token-bucket rate. 0 holds them until the rack returns.
   */
  @IsInt() @Min(0) @Max(86_400_000) GANTRY_PARTITION_HOLD_MS: number = 300000;
  /**
   * How long a placed rank may go without its node reporting it started (RUNNING, or listed in a
   * beat) before its attempt is lost with reason START_TIMEOUT and placed again, elsewhere if it can
   * be (no retry used), ms. Counted only while the reconciler's own view is continuous (ADR 0035).
   * At least twice GANTRY_HEARTBEAT_MS: a lost RUN is repeated once a heartbeat period.
   */
  @IsInt() @Min(1000) @Max(86_400_000) GANTRY_START_TIMEOUT_MS: number = 300000;
  /** Start timeouts in a row (a start in between resets the count) that cordon a node with reason START_FAILURES. */
  @IsInt() @Min(1) @Max(1000) GANTRY_NODE_START_FAILURES: number = 3;
  /**
   * Half-life of past GPU usage in fair share, hours (fractional allowed, so benchmarks can
   * compress time): the usage folder decays fair_share_usage with it (ADR 0037, contract 5.4).
   */
  @IsNumber() @Min(0.001) @Max(87_600) GANTRY_FAIRSHARE_HALF_LIFE_HOURS: number = 168;
  /** How often the leader folds new usage records into the hourly rollup and fair share, ms (ADR 0037). */
  @IsInt() @Min(100) @Max(3_600_000) GANTRY_USAGE_FOLD_MS: number = 5000;
  /** Identity of this replica in leader leases; defaults to hostname-pid. */
  @IsOptional() @IsString() GANTRY_INSTANCE_ID?: string;

  override applyDerivedDefaults(given: ReadonlySet<string>): void {
    super.applyDerivedDefaults(given);
    if (!given.has('GANTRY_PHANTOM_GRACE_MS')) this.GANTRY_PHANTOM_GRACE_MS = defaultPhantomGraceMs(this.GANTRY_HEARTBEAT_MS);
    if (!given.has('GANTRY_INGEST_STALL_MS')) this.GANTRY_INGEST_STALL_MS = defaultIngestStallMs(this.GANTRY_HEARTBEAT_MS);
    if (!given.has('GANTRY_DETECTOR_INTERVAL_MS')) this.GANTRY_DETECTOR_INTERVAL_MS = defaultDetectorIntervalMs(this.GANTRY_NODE_DEAD_MS);
  }

  override problems(given: ReadonlySet<string>): string[] {
    const problems = super.problems(given);
    if (this.GANTRY_START_TIMEOUT_MS < 2 * this.GANTRY_HEARTBEAT_MS) {
      const show = (name: 'GANTRY_START_TIMEOUT_MS' | 'GANTRY_HEARTBEAT_MS') => `${name}=${this[name]}${given.has(name) ? '' : ' (default)'}`;
      problems.push(
        `${show('GANTRY_START_TIMEOUT_MS')} must be at least twice ${show('GANTRY_HEARTBEAT_MS')}: a lost RUN is repeated once a heartbeat period, and a node must get that chance before it is judged`,
      );
    }
    return problems;
  }
}

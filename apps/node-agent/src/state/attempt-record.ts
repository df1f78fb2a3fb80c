import { JobReportMessage } from '@gantry/contracts';
import type { TraceHeaders } from '@gantry/messaging';

/**
 * What an agent keeps on disk about one attempt it started, so that a restarted agent can carry on
 * (ADR 0020): written before the attempt's process starts, again when something about it changes
 * that a restart must not forget (a stop asked for, its end, that end acknowledged by Kafka).
 */
export interface AttemptRecord {
  v: 1;
  nodeId: string;
  jobId: string;
  attempt: number;
  gpus: number;
  /** The GPU devices the RUN gave it; no other attempt starts on them until it has ended. */
  gpuIndices?: number[];
  /** Trace context of the RUN that started it; every report of the attempt carries it. */
  trace: TraceHeaders;
  /** When this agent started it (epoch ms): its deadline counts from here, across restarts. */
  startedAt: number;
  maxRuntimeSeconds?: number;
  /** Why the agent is stopping it (KILL reason, DEADLINE_EXCEEDED, FENCED...), once asked. */
  stoppedFor?: string;
  /** How it ended, once it has: the report to send, and re-send for a repeated RUN. */
  final?: JobReportMessage;
  /** Whether Kafka acknowledged `final`; until it has, a restarted agent sends it again. */
  finalSent?: boolean;
}

/** Where an agent keeps its attempts' records (FileAttemptStore), or nowhere (a simulated fleet that runs nothing). */
export interface AttemptStore {
  save(record: AttemptRecord): void;
  remove(record: Pick<AttemptRecord, 'nodeId' | 'jobId' | 'attempt'>): void;
  /** Every record of one node, oldest start first. */
  load(nodeId: string): AttemptRecord[];
}

export class NoAttemptStore implements AttemptStore {
  save(): void {}
  remove(): void {}
  load(): AttemptRecord[] {
    return [];
  }
}

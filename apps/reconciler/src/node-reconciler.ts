import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Counter } from 'prom-client';
import { AgentCommandMessage, HeartbeatMessage, TOPICS, buildRunCommand } from '@gantry/contracts';
import { BeatCursor, isTerminal, judgeBeat, reconcileNode } from '@gantry/domain';
import { CommandSigner, MessageProducer, SIGNATURE_HEADER } from '@gantry/messaging';
import { autocommit, hostIpcQueues, loadLiveRanksOnNodes } from '@gantry/persistence';
import { COMMAND_SIGNER, CONFIG, KAFKA_PRODUCER } from '@gantry/runtime';
import { AttemptLossApplier } from './attempt-loss-applier';
import { ReconcilerEnv } from './config';
import { ReconcilerView } from './reconciler-view';

const actions = new Counter({ name: 'gantry_reconciler_actions_total', help: 'Commands sent to close desired/observed gaps', labelNames: ['kind', 'reason'] });

/** Beat cursors kept per replica at most; past it the least recently moved are forgotten. */
const MAX_CURSORS = 200_000;

/**
 * Compares each heartbeat's `running` set with the ranks the control plane wants on that node and
 * sends the commands that close the gap (RUN repeated, KILL for orphans and unexecuted cancels),
 * or loses the attempt: a RUNNING rank missing for the phantom grace, or a placed rank its node has
 * not started within GANTRY_START_TIMEOUT_MS (ADR 0035). The start timeout is judged here because
 * this already holds every beating node's ranks with their placement times on every beat: it costs
 * one comparison per unstarted rank, no read. A node that stops beating is the failure detector's.
 * Commands go straight to Kafka, signed: they change no durable state and agents treat repeats as
 * no-ops. Only the newest beat of a node counts (judgeBeat, receive order, with this replica's own
 * cursors: a replay is skipped here and parked by the ingester).
 */
@Injectable()
export class NodeReconciler {
  /** Per node: since when each RUNNING rank has been missing from its beats (this replica's partitions only). */
  private readonly missing = new Map<string, Map<string, number>>();
  private readonly cursors = new Map<string, BeatCursor>();

  constructor(
    private readonly losses: AttemptLossApplier,
    @Inject(DataSource) private readonly ds: DataSource,
    @Inject(KAFKA_PRODUCER) private readonly producer: MessageProducer,
    @Inject(COMMAND_SIGNER) private readonly signer: CommandSigner,
    @Inject(CONFIG) private readonly config: ReconcilerEnv,
    private readonly view: ReconcilerView,
  ) {}

  /** Partitions moved: the cursors of nodes read elsewhere meanwhile would be stale. */
  forgetCursors(): void {
    this.cursors.clear();
  }

  /** The newest beat of each node in the batch that is newer than what this replica saw last. */
  private newestBeats(beats: Array<{ value: HeartbeatMessage; offset: string }>): Map<string, HeartbeatMessage> {
    const newest = new Map<string, HeartbeatMessage>();
    for (const b of beats) {
      const verdict = judgeBeat(this.cursors.get(b.value.nodeId) ?? null, b.value, b.offset);
      if (verdict.kind !== 'newer') continue;
      this.cursors.delete(b.value.nodeId);
      this.cursors.set(b.value.nodeId, verdict.cursor);
      if (this.cursors.size > MAX_CURSORS) this.cursors.delete(this.cursors.keys().next().value!);
      newest.set(b.value.nodeId, b.value);
    }
    return newest;
  }

  async reconcile(beats: Array<{ value: HeartbeatMessage; offset: string }>, nowMs = Date.now()): Promise<number> {
    const newest = this.newestBeats(beats);
    for (const b of newest.values()) this.view.beatSent(b.sentAt);
    // Absence counts only since this replica's view has been continuous (ADR 0007): a broker
    // restart or a rejoin holds beats and final reports up, and that silence is ours, not the nodes'.
    const absenceFrom = this.view.absence(nowMs);
    const live = await loadLiveRanksOnNodes(autocommit(this.ds), [...newest.keys()]);
    const byNode = new Map<string, typeof live>();
    for (const r of live) byNode.set(r.nodeId, [...(byNode.get(r.nodeId) ?? []), r]);

    const commands: AgentCommandMessage[] = [];
    const repeats: Array<{ job: (typeof live)[number]['job']; nodeId: string }> = [];
    const lost: Array<{ jobId: string; attempt: number; nodeId: string; reason: 'PHANTOM' | 'START_TIMEOUT' }> = [];
    for (const beat of newest.values()) {
      const ranks = byNode.get(beat.nodeId) ?? [];
      // A rank of a job that already ended (a gang whose other rank failed) is no longer wanted,
      // so a lost KILL for it is repeated here as an orphan kill.
      const desired = ranks
        .filter((r) => !isTerminal(r.job.state))
        .map((r) => ({
          jobId: r.job.id,
          attempt: r.job.attempt,
          rankState: r.rankState,
          cancelRequested: r.job.cancelRequested,
          placedAt: r.placedAt.getTime(),
        }));
      // Judge from the beat's own time: a beat that sat in Kafka says nothing about the present.
      const result = reconcileNode(
        beat.running,
        desired,
        Math.min(nowMs, beat.sentAt),
        this.config.GANTRY_HEARTBEAT_MS,
        this.missing.get(beat.nodeId),
        this.config.GANTRY_PHANTOM_GRACE_MS,
        absenceFrom,
        this.config.GANTRY_START_TIMEOUT_MS,
      );
      if (result.missingSince.size > 0) this.missing.set(beat.nodeId, result.missingSince);
      else this.missing.delete(beat.nodeId);
      for (const a of result.actions) {
        actions.inc({ kind: a.kind, reason: a.reason });
        if (a.kind === 'LOST') {
          lost.push({ jobId: a.jobId, attempt: a.attempt, nodeId: beat.nodeId, reason: a.reason });
        } else if (a.kind === 'KILL') {
          commands.push({ type: 'KILL', nodeId: beat.nodeId, jobId: a.jobId, attempt: a.attempt, issuedAt: nowMs, reason: a.reason });
        } else {
          repeats.push({ job: ranks.find((r) => r.job.id === a.jobId)!.job, nodeId: beat.nodeId });
        }
      }
    }
    if (repeats.length > 0) {
      // A repeated RUN is built as the scheduler's was, with its queue's IPC setting read now.
      const hostIpc = await hostIpcQueues(
        autocommit(this.ds),
        repeats.map((r) => r.job.queue),
      );
      for (const { job, nodeId } of repeats) {
        commands.push(buildRunCommand({ ...job, hostIpc: hostIpc.has(job.queue) }, job.attempt, job.nodeIds, job.nodeIds.indexOf(nodeId), nowMs));
      }
    }
    if (commands.length > 0) {
      await this.producer.send(
        TOPICS.agentCommands,
        commands.map((c) => {
          const value = JSON.stringify(c);
          return { key: c.nodeId, value, headers: { [SIGNATURE_HEADER]: this.signer.sign(value) } };
        }),
      );
    }
    for (const l of lost) await this.losses.lose(l.jobId, l.attempt, l.nodeId, l.reason);
    return commands.length;
  }
}

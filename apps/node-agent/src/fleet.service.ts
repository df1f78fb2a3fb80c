import { Inject, Injectable, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import { hostname, networkInterfaces } from 'node:os';
import { dirname, join } from 'node:path';
import { BatchConsumer, MessageProducer, commandPublicKeys } from '@gantry/messaging';
import { AgentCommandMessage } from '@gantry/contracts';
import type { Logger } from '@gantry/platform';
import { CONFIG, Consumers, KAFKA_PRODUCER, ReadinessRegistry, SERVICE_LOGGER } from '@gantry/runtime';
import { AgentEnv } from './config';
import { AttemptCgroups } from './cgroups/attempt-cgroups';
import { createCommandConsumer } from './command-consumer';
import { findContainerRuntime } from './containers/container-runtime';
import { Executor } from './executors/executor';
import { NodeSpawner } from './executors/node-spawner';
import { SpawnHelper } from './executors/spawn-helper';
import { ProcessExecutor } from './executors/process-executor';
import { SleepExecutor } from './executors/sleep-executor';
import { AttemptSandbox } from './sandbox/attempt-sandbox';
import { UidRange, parseUidRange } from './sandbox/uid-allocation';
import { simulatedNode } from './fleet/fleet-layout';
import { HeartbeatSender } from './heartbeat-sender';
import { nodeAddress } from './identity/node-address';
import { NodeCredentials } from './identity/node-credentials';
import { NodeKeys } from './identity/node-keys';
import { NodeRuntime } from './node-runtime';
import { ReportPublisher } from './report-publisher';
import { AttemptLogs } from './logs/attempt-logs';
import { LogHousekeeper } from './logs/log-housekeeper';
import { LogServer } from './logs/log-server';
import { LoggedExecutor } from './logs/logged-executor';
import { AttemptStore, NoAttemptStore } from './state/attempt-record';
import { FileAttemptStore } from './state/file-attempt-store';
import { HostTelemetry } from './telemetry/host-telemetry';
import { SimulatedTelemetry } from './telemetry/simulated-telemetry';

const hostLimits = new Gauge({
  name: 'gantry_agent_attempt_isolation',
  help: 'What this agent found at start: cgroups (v2, v1 or none: attempts run without CPU and memory limits), a container runtime for jobs with an image (podman, docker or none) and the sandbox (bwrap, or off: attempts run as the agent); always 1',
  labelNames: ['cgroups', 'container_runtime', 'sandbox'],
});

/** The nodes this process speaks for: one real host, or GANTRY_SIM_NODES simulated ones. */
@Injectable()
export class FleetService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly nodes = new Map<string, NodeRuntime>();
  private readonly reports: ReportPublisher;
  private readonly commands: BatchConsumer<AgentCommandMessage>;
  private readonly beats: HeartbeatSender;
  private readonly keys = new NodeKeys();
  private beating = false;
  /** Where this agent's nodes listen (one host: a real node, or a simulated fleet given GANTRY_NODE_ADDRESS); null: no logs served. */
  private readonly address: string | null;
  private readonly logs: AttemptLogs;
  private readonly logServer: LogServer | null;
  private readonly housekeeper: LogHousekeeper;
  private logsPort: number | null = null;
  /** What this host lets the agent do, for the start-up log line. */
  private hostCapabilities: object = {};
  private cgroups: AttemptCgroups | null = null;
  /** Starts the attempts' shims when GANTRY_AGENT_SPAWN=helper; null otherwise. */
  private spawnHelper: SpawnHelper | null = null;

  constructor(
    @Inject(KAFKA_PRODUCER) producer: MessageProducer,
    consumers: Consumers,
    @Inject(CONFIG) private readonly config: AgentEnv,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
    readiness: ReadinessRegistry,
    private readonly credentials: NodeCredentials,
  ) {
    this.reports = new ReportPublisher(producer, this.keys, logger);
    this.logs = new AttemptLogs(join(config.GANTRY_AGENT_WORKDIR, config.GANTRY_AGENT_ID));
    const { executor, store } =
      config.GANTRY_SIM_EXECUTOR === 'sleep'
        ? { executor: new SleepExecutor(config.GANTRY_KILL_GRACE_MS), store: new NoAttemptStore() }
        : this.processExecutor();
    this.address =
      config.GANTRY_SIM_NODES > 0 ? (config.GANTRY_NODE_ADDRESS ?? null) : nodeAddress(config.GANTRY_NODE_ADDRESS, networkInterfaces(), hostname());
    const split = { every: config.GANTRY_TELEMETRY_EVERY, delta: config.GANTRY_TELEMETRY_DELTA };
    if (config.GANTRY_SIM_NODES > 0) {
      for (let i = 0; i < config.GANTRY_SIM_NODES; i++) {
        const spec = simulatedNode(config.GANTRY_SIM_PREFIX, i);
        let runtime: NodeRuntime | null = null;
        const telemetry = new SimulatedTelemetry(spec, () => runtime?.busyGpus() ?? 0);
        runtime = new NodeRuntime(
          { nodeId: spec.nodeId, zone: spec.zone, rack: spec.rack, ...(this.address ? { address: this.address } : {}) },
          executor,
          telemetry,
          this.reports,
          split,
          store,
        );
        this.nodes.set(spec.nodeId, runtime);
      }
    } else {
      const nodeId = config.realNodeId;
      this.nodes.set(
        nodeId,
        new NodeRuntime(
          { nodeId, zone: config.GANTRY_ZONE, rack: config.GANTRY_RACK, address: this.address! },
          executor,
          new HostTelemetry(config.GANTRY_NVIDIA_SMI),
          this.reports,
          split,
          store,
        ),
      );
    }
    this.recover();
    this.commands = createCommandConsumer(consumers, {
      groupId: config.commandGroupId,
      nodes: this.nodes,
      logger,
      publicKeys: commandPublicKeys(config.GANTRY_COMMAND_PUBLIC_KEY),
      maxAgeMs: config.GANTRY_COMMAND_MAX_AGE_MS,
    });
    this.beats = new HeartbeatSender(producer, [...this.nodes.values()], {
      periodMs: config.GANTRY_HEARTBEAT_MS,
      keys: this.keys,
      fenceMs: config.GANTRY_AGENT_FENCE_MS,
      logger,
      logsPort: () => this.logsPort,
    });
    this.logServer =
      this.address && config.GANTRY_SIM_EXECUTOR === 'process'
        ? new LogServer(this.logs, { nodeIds: new Set(this.nodes.keys()), publicKeys: commandPublicKeys(config.GANTRY_COMMAND_PUBLIC_KEY), logger })
        : null;
    this.housekeeper = new LogHousekeeper(
      this.logs,
      { maxBytes: config.GANTRY_AGENT_LOG_MAX_BYTES, capCheckMs: config.GANTRY_AGENT_LOG_CAP_CHECK_MS, retentionMs: config.GANTRY_AGENT_LOG_RETENTION_MS },
      logger,
    );
    readiness.add({
      name: 'heartbeats',
      check: async () => {
        if (!this.beating) throw new Error('first heartbeats not yet acknowledged');
      },
    });
  }

  /**
   * Takes over what an earlier process of this agent left (ADR 0020), before the command consumer
   * exists: a repeated RUN must find its attempt already known, and the first beat list it.
   * Their reports wait for the nodes' credentials (onApplicationBootstrap).
   */
  private recover(): void {
    this.reports.hold();
    const recovered = { adopted: 0, ended: 0, resent: 0 };
    for (const n of this.nodes.values()) {
      const r = n.recover();
      recovered.adopted += r.adopted;
      recovered.ended += r.ended;
      recovered.resent += r.resent;
    }
    if (recovered.adopted + recovered.ended > 0) this.logger.info(recovered, 'attempts of an earlier agent process taken over');
  }

  /**
   * The executor of real processes and the store of their records (ADR 0020), with what this host
   * allows: per-attempt cgroups, a container runtime. What it does not allow is said once here.
   */
  private processExecutor(): { executor: Executor; store: AttemptStore } {
    const c = this.config;
    const stateDir = c.GANTRY_AGENT_STATE_DIR!;
    try {
      mkdirSync(stateDir, { recursive: true });
      accessSync(stateDir, constants.W_OK);
    } catch (err) {
      throw new Error(`GANTRY_AGENT_STATE_DIR=${stateDir} is not a writable directory: ${(err as Error).message}`);
    }
    let cgroups: AttemptCgroups | null = null;
    if (c.GANTRY_AGENT_CGROUPS === 'auto') {
      const probed = AttemptCgroups.probe(c.GANTRY_AGENT_ID, c.GANTRY_AGENT_CGROUP_ROOT);
      if (probed instanceof AttemptCgroups) cgroups = probed;
      else this.logger.warn({ why: probed.unavailable }, 'attempts run without CPU and memory limits (no writable cgroups)');
    }
    const found = findContainerRuntime(c.GANTRY_AGENT_CONTAINER_RUNTIME!);
    if (!found.runtime && c.GANTRY_AGENT_CONTAINER_RUNTIME !== 'none')
      this.logger.warn(
        { why: found.why, imagePolicy: c.GANTRY_AGENT_IMAGE_POLICY },
        'no container runtime: jobs with an image run per GANTRY_AGENT_IMAGE_POLICY',
      );
    const sandbox = this.attemptSandbox(stateDir);
    this.cgroups = cgroups;
    this.hostCapabilities = {
      cgroups: cgroups ? `v${cgroups.mount.version}` : 'none',
      containerRuntime: found.runtime ?? 'none',
      sandbox: c.GANTRY_AGENT_SANDBOX,
      stateDir,
    };
    hostLimits.set({ cgroups: cgroups ? `v${cgroups.mount.version}` : 'none', container_runtime: found.runtime ?? 'none', sandbox: c.GANTRY_AGENT_SANDBOX }, 1);
    this.spawnHelper = c.GANTRY_AGENT_SPAWN === 'helper' ? new SpawnHelper(this.logger) : null;
    const spawner = this.spawnHelper ?? new NodeSpawner();
    const executor = new ProcessExecutor({
      workdir: join(c.GANTRY_AGENT_WORKDIR, c.GANTRY_AGENT_ID),
      stateDir,
      agentId: c.GANTRY_AGENT_ID,
      killGraceMs: c.GANTRY_KILL_GRACE_MS,
      cgroups,
      containerRuntime: found.runtime,
      imagePolicy: c.GANTRY_AGENT_IMAGE_POLICY,
      spawner,
      sandbox,
      logger: this.logger,
    });
    return { executor: new LoggedExecutor(executor, this.logs), store: new FileAttemptStore(stateDir, this.logger) };
  }

  /**
   * The sandbox attempts run in (ADR 0033), or null with GANTRY_AGENT_SANDBOX=off. A host that
   * cannot build it stops the agent: running tenants' jobs as root beside it is never a fallback.
   * What jobs must not see of the agent (its state, logs and credential file) is hidden from them
   * even where GANTRY_AGENT_SANDBOX_PATHS would show it.
   */
  private attemptSandbox(stateDir: string): AttemptSandbox | null {
    const c = this.config;
    if (c.GANTRY_AGENT_SANDBOX === 'off') {
      this.logger.warn("GANTRY_AGENT_SANDBOX=off: attempts run as the agent's own user, with nothing between them and the node");
      return null;
    }
    if (c.GANTRY_NODE_CREDENTIAL_FILE) {
      const mode = statSync(c.GANTRY_NODE_CREDENTIAL_FILE).mode & 0o077;
      if (mode !== 0) throw new Error(`GANTRY_NODE_CREDENTIAL_FILE=${c.GANTRY_NODE_CREDENTIAL_FILE} is readable by others than its owner: chmod 600 it`);
    }
    const probed = AttemptSandbox.probe({
      hostPaths: c.GANTRY_AGENT_SANDBOX_PATHS.split(','),
      writablePaths: c.GANTRY_AGENT_SANDBOX_WRITABLE_PATHS?.split(',') ?? [],
      agentPaths: [stateDir, c.GANTRY_AGENT_WORKDIR, ...(c.GANTRY_NODE_CREDENTIAL_FILE ? [dirname(c.GANTRY_NODE_CREDENTIAL_FILE)] : [])],
      uidRange: parseUidRange(c.GANTRY_AGENT_UID_RANGE) as UidRange,
      stateDir,
    });
    if (!(probed instanceof AttemptSandbox)) throw new Error(`GANTRY_AGENT_SANDBOX=bwrap, but this host cannot sandbox attempts: ${probed.unavailable}`);
    return probed;
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.loadCredentials();
    // Reports of recovered attempts were queued in the constructor; they can be signed now.
    this.reports.release();
    // Consumers (started by the runtime) come first. Beats make nodes placeable; commands for them must not arrive before the consumer can see them.
    await this.commands.whenJoined(60_000);
    // The log server listens before the first beat, which says where it is (logsPort).
    if (this.logServer) {
      this.logsPort = await this.logServer.listen(this.address!, this.config.GANTRY_AGENT_LOGS_PORT);
      this.logger.info({ address: this.address, port: this.logsPort }, 'serving attempt logs');
    }
    this.housekeeper.start();
    await this.beats.start();
    this.beating = true;
    // Not awaited: a helper slow to start must not hold the agent back (its requests wait for it).
    const spawn = this.spawnHelper?.mode ?? (this.config.GANTRY_SIM_EXECUTOR === 'process' ? 'node' : 'none');
    this.logger.info({ nodes: this.nodes.size, executor: this.config.GANTRY_SIM_EXECUTOR, spawn, ...this.hostCapabilities }, 'agent started');
  }

  /** Every node's credential (NodeCredentials: loaded once, shared with a real agent's Kafka token source). Nothing is sent before. */
  private async loadCredentials(): Promise<void> {
    for (const [nodeId, credential] of await this.credentials.all()) this.keys.set(nodeId, credential);
  }

  /**
   * Stops heartbeats and commands and flushes reports. Running attempts are left to the next agent
   * process (GANTRY_AGENT_ON_STOP=leave: an upgrade does not kill jobs) or stopped (`stop`).
   */
  async onModuleDestroy(): Promise<void> {
    this.beats.stop();
    const leave = this.config.GANTRY_AGENT_ON_STOP === 'leave' && this.config.GANTRY_SIM_EXECUTOR === 'process';
    if (!leave) for (const n of this.nodes.values()) n.stopAll('AGENT_STOPPED');
    const deadline = Date.now() + this.config.GANTRY_KILL_GRACE_MS + 1000;
    while (!leave && [...this.nodes.values()].some((n) => n.runningCount > 0) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    await this.reports.drain(3000);
    this.housekeeper.stop();
    await this.logServer?.close();
    this.cgroups?.removeIfEmpty();
  }
}

import 'reflect-metadata';
import { IsIn, IsInt, IsNumber, IsOptional, IsString, Matches, Max, MaxLength, Min, MinLength } from 'class-validator';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fleetCommandGroup, nodeCommandGroup } from '@gantry/contracts';
import { ServiceEnv, defaultFenceMs, timingProblems } from '@gantry/platform';
import { parseUidRange } from './sandbox/uid-allocation';

export class AgentEnv extends ServiceEnv {
  /** Simulated nodes in this process; 0 runs one real agent for this host. */
  @IsInt() @Min(0) @Max(100000) GANTRY_SIM_NODES: number = 0;
  /** What a job does: `process` runs its command; `sleep` ends it after SIM_DURATION_MS (from the job env, default 1000) with exit 0. */
  @IsIn(['process', 'sleep']) GANTRY_SIM_EXECUTOR: 'process' | 'sleep' = 'process';
  /** Prefix of simulated node ids: `<prefix>-00042`. */
  @Matches(/^[a-z0-9][a-z0-9-]{0,40}$/) GANTRY_SIM_PREFIX: string = 'sim';
  /** Identity of this agent process (a simulated fleet reads its commands in group gantry-fleet-<id>); defaults to the host name. */
  @IsString() GANTRY_AGENT_ID: string = hostname();
  /** Node id of a real agent; defaults to the host name. */
  @IsOptional() @IsString() GANTRY_NODE_ID?: string;
  /**
   * The nvidia-smi a real agent asks for its GPUs (a name on PATH or a path). Another program that
   * prints the same CSV stands in for it: the end-to-end tests give a fake inventory this way.
   */
  @IsString() @MinLength(1) GANTRY_NVIDIA_SMI: string = 'nvidia-smi';
  /**
   * Where a real agent's node listens (host name or IP), sent in its heartbeats: a gang's
   * MASTER_ADDR when the node holds rank 0, and where the agent serves logs (GANTRY_AGENT_LOGS_PORT).
   * Default: the first non-internal IPv4 address, else the host name. A simulated fleet's nodes have
   * no address (and serve no logs) unless it is set: then all of them report it.
   */
  @IsOptional() @IsString() @MinLength(1) @MaxLength(255) GANTRY_NODE_ADDRESS?: string;
  /** Zone of a real agent's node. */
  @IsString() GANTRY_ZONE: string = 'local';
  /** Rack of a real agent's node. */
  @IsString() GANTRY_RACK: string = 'local';
  /**
   * Un-acknowledged heartbeat time after which the agent stops its own attempts, ms; between
   * GANTRY_HEARTBEAT_MS and GANTRY_NODE_DEAD_MS. Default three quarters of GANTRY_NODE_DEAD_MS (30000 at its default).
   */
  @IsInt() @Min(1000) GANTRY_AGENT_FENCE_MS: number = 30000;
  /** Beats per full telemetry at most; the beats between carry liveness and the running set only (ADR 0010). 1 = every beat. */
  @IsInt() @Min(1) @Max(1000) GANTRY_TELEMETRY_EVERY: number = 6;
  /** A utilisation (0..1) or memory-used (share of total) move that is sent at once rather than at the next full beat. */
  @IsNumber() @Min(0) @Max(1) GANTRY_TELEMETRY_DELTA: number = 0.1;
  /** SIGTERM-to-SIGKILL grace when stopping a job, ms. */
  @IsInt() @Min(0) GANTRY_KILL_GRACE_MS: number = 10000;
  /** Where job logs are written (`<workdir>/<agent id>/<jobId>-<attempt>.log`). */
  @IsString() GANTRY_AGENT_WORKDIR: string = join(tmpdir(), 'gantry-agent');
  /**
   * Port on the node's address where the agent serves its attempts' logs to the gateway (ADR 0021),
   * sent in heartbeats as `logsPort`. 0: one the OS picks (tests run several agents on one host).
   * Not the kubelet's 10250, which a host-network agent pod would collide with.
   */
  @IsInt() @Min(0) @Max(65535) GANTRY_AGENT_LOGS_PORT: number = 9250;
  /** Most bytes kept of one attempt's log; past it the oldest bytes are dropped (contract 4.4). Default 64 MiB. */
  @IsInt() @Min(4096) GANTRY_AGENT_LOG_MAX_BYTES: number = 64 * 1024 * 1024;
  /** How often running attempts' logs are checked against GANTRY_AGENT_LOG_MAX_BYTES, ms: a log may pass the cap by what its job writes in this long. */
  @IsInt() @Min(100) @Max(60_000) GANTRY_AGENT_LOG_CAP_CHECK_MS: number = 1000;
  /**
   * A finished attempt's log (and its node-list file) is deleted from the node this long after it was
   * last written, ms. Default 7 days, the control plane's GANTRY_JOB_RETENTION_MS default: a log
   * lives as long as its job.
   */
  @IsInt() @Min(60_000) GANTRY_AGENT_LOG_RETENTION_MS: number = 7 * 24 * 3600 * 1000;
  /**
   * Where the agent keeps what a restart must not lose (its attempts, their unsent ends, the shims'
   * exit statuses; ADR 0020). Must survive the agent process (a host path under a DaemonSet).
   * Default: `<GANTRY_AGENT_WORKDIR>/<GANTRY_AGENT_ID>/state`.
   */
  @IsOptional() @IsString() @MinLength(1) GANTRY_AGENT_STATE_DIR?: string;
  /**
   * What a graceful stop (SIGTERM: an upgrade, a rolling update) does with running attempts:
   * `leave` them running for the next agent process to re-adopt, or `stop` them (and report
   * nothing: their node will be judged lost). Default `leave` for a real agent, `stop` for a simulated fleet.
   */
  @IsOptional() @IsIn(['leave', 'stop']) GANTRY_AGENT_ON_STOP?: 'leave' | 'stop';
  /**
   * Per-attempt cgroups with the job's cpuCores and memoryMiB (`auto`: where the node allows it;
   * `off`: never). Default `auto` for a real agent, `off` for a simulated fleet (its nodes share one host).
   */
  @IsOptional() @IsIn(['auto', 'off']) GANTRY_AGENT_CGROUPS?: 'auto' | 'off';
  /**
   * How attempts run (contract 5.1, ADR 0033): `bwrap`, each as its owner's unprivileged uid in user,
   * PID, mount, IPC and cgroup namespaces of its own built by bubblewrap, seeing only
   * GANTRY_AGENT_SANDBOX_PATHS of the host, read-only, and its own devices; the agent refuses to
   * start where it cannot (no bwrap, not root, no unprivileged user namespaces). `off`: as the agent's
   * own user, beside it, with nothing between tenants and the node: for a host that runs one
   * trusted tenant, or to measure what the sandbox costs.
   */
  @IsIn(['bwrap', 'off']) GANTRY_AGENT_SANDBOX: 'bwrap' | 'off' = 'bwrap';
  /**
   * The uids attempts run as, `<first>-<last>` (inclusive): each owner gets one of its own on the node,
   * kept in the state directory, never uid 0 or the agent's. Reserve the range on the host (no
   * user of /etc/passwd in it; files the jobs write on shared storage carry these uids).
   */
  @Matches(/^\s*\d{1,10}-\d{1,10}\s*$/, { message: 'GANTRY_AGENT_UID_RANGE must be two uids joined by "-", e.g. 200000-299999' })
  GANTRY_AGENT_UID_RANGE: string = '200000-299999';
  /**
   * Host paths a sandboxed attempt sees, read-only, comma-separated (those missing on the host are
   * skipped): the programs and libraries jobs run with. Everything else of the host is invisible but
   * /dev (its own, with its GPUs), /proc (its own processes) and its own /tmp and /dev/shm.
   */
  @Matches(/^\/[^,]*(,\/[^,]*)*$/, { message: 'GANTRY_AGENT_SANDBOX_PATHS must be absolute paths separated by commas' })
  GANTRY_AGENT_SANDBOX_PATHS: string = '/usr,/bin,/sbin,/lib,/lib32,/lib64,/libx32,/etc,/opt,/sys';
  /**
   * Host paths a sandboxed attempt may write, comma-separated (shared storage: scratch, datasets,
   * checkpoints); each attempt writes there as its owner's uid, so the paths' own permissions keep
   * owners apart. Empty (the default): none.
   */
  @IsOptional()
  @Matches(/^\/[^,]*(,\/[^,]*)*$/, { message: 'GANTRY_AGENT_SANDBOX_WRITABLE_PATHS must be absolute paths separated by commas' })
  GANTRY_AGENT_SANDBOX_WRITABLE_PATHS?: string;
  /** Where the cgroup hierarchies are mounted (v2 unified, or v1 cpu and memory beneath it). */
  @IsString() @Matches(/^\//, { message: 'GANTRY_AGENT_CGROUP_ROOT must be an absolute path' }) GANTRY_AGENT_CGROUP_ROOT: string = '/sys/fs/cgroup';
  /**
   * The container runtime for jobs with an `image` (other than `none`): `auto` finds podman or docker
   * (`<runtime> info` must succeed at start), `none` never uses one. Default `auto` for a real agent, `none` for a simulated fleet.
   */
  @IsOptional() @IsIn(['auto', 'podman', 'docker', 'none']) GANTRY_AGENT_CONTAINER_RUNTIME?: 'auto' | 'podman' | 'docker' | 'none';
  /** A job with an `image` on a node without a container runtime: run its command `direct`ly, or `refuse` it (FAILED, reason IMAGE_UNSUPPORTED). */
  @IsIn(['direct', 'refuse']) GANTRY_AGENT_IMAGE_POLICY: 'direct' | 'refuse' = 'direct';
  /**
   * What starts an attempt's shim: `helper`, a small python3 process that spawns with vfork (falls back
   * to `node`, with a warning, where python3 cannot run or the helper dies), or `node`, Node's
   * spawn, which forks the agent for every attempt (ADR 0032).
   */
  @IsIn(['helper', 'node']) GANTRY_AGENT_SPAWN: 'helper' | 'node' = 'helper';
  /**
   * The control plane's command-signing public key(s), PEM (SPKI), from GET /v1/cluster/command-key
   * or the enrollment answer. Several PEM blocks may be given (key rotation). No command that does
   * not verify against one of them is carried out (contract 4.1).
   */
  @Matches(/-----BEGIN PUBLIC KEY-----/, { message: "GANTRY_COMMAND_PUBLIC_KEY must hold the control plane's command key (PEM, -----BEGIN PUBLIC KEY-----)" })
  GANTRY_COMMAND_PUBLIC_KEY!: string;
  /** A command issued longer ago than this is refused (a recorded command cannot be replayed later), ms. */
  @IsInt() @Min(1000) GANTRY_COMMAND_MAX_AGE_MS: number = 600_000;
  /** A real agent's node credential, from its enrollment (POST /v1/nodes/{id}/enrollment). */
  @IsOptional() @IsString() @MinLength(16) GANTRY_NODE_CREDENTIAL?: string;
  /** The same, read from a file (a host path the operator wrote when enrolling the node); the file's first line. */
  @IsOptional() @IsString() GANTRY_NODE_CREDENTIAL_FILE?: string;
  /**
   * Enroll this agent's nodes itself, through the gateway at this URL with an operator token
   * (GANTRY_ENROLL_TOKEN): what the simulated fleet does. A real agent gets GANTRY_NODE_CREDENTIAL instead.
   */
  @IsOptional() @Matches(/^https?:\/\//, { message: 'GANTRY_ENROLL_URL must be an http(s) URL' }) GANTRY_ENROLL_URL?: string;
  /** The operator token GANTRY_ENROLL_URL enrolls with. */
  @IsOptional() @IsString() @MinLength(16) GANTRY_ENROLL_TOKEN?: string;
  /**
   * The gateway a real agent asks for its node's Kafka tokens (KAFKA_SASL_MECHANISM=oauthbearer,
   * ADR 0034), proving its credential. Default: GANTRY_ENROLL_URL.
   */
  @IsOptional() @Matches(/^https?:\/\//, { message: 'GANTRY_GATEWAY_URL must be an http(s) URL' }) GANTRY_GATEWAY_URL?: string;

  /** A real agent's node id: GANTRY_NODE_ID, else the host name. */
  get realNodeId(): string {
    return this.GANTRY_NODE_ID ?? hostname();
  }

  /**
   * Where this agent reads its commands (ADR 0034): a real node in its own group, which only its
   * principal may use; a simulated fleet in a group of the fleet's principal, which no node's group shares.
   */
  get commandGroupId(): string {
    return this.GANTRY_SIM_NODES > 0 ? fleetCommandGroup(this.GANTRY_AGENT_ID) : nodeCommandGroup(this.realNodeId);
  }

  /** Where a real agent asks for Kafka tokens. */
  get tokenGatewayUrl(): string | undefined {
    return this.GANTRY_GATEWAY_URL ?? this.GANTRY_ENROLL_URL;
  }

  override applyDerivedDefaults(given: ReadonlySet<string>): void {
    super.applyDerivedDefaults(given);
    if (!given.has('GANTRY_AGENT_FENCE_MS')) this.GANTRY_AGENT_FENCE_MS = defaultFenceMs(this.GANTRY_NODE_DEAD_MS);
    const simulated = this.GANTRY_SIM_NODES > 0;
    this.GANTRY_AGENT_STATE_DIR ??= join(this.GANTRY_AGENT_WORKDIR, this.GANTRY_AGENT_ID, 'state');
    this.GANTRY_AGENT_ON_STOP ??= simulated ? 'stop' : 'leave';
    this.GANTRY_AGENT_CGROUPS ??= simulated ? 'off' : 'auto';
    this.GANTRY_AGENT_CONTAINER_RUNTIME ??= simulated ? 'none' : 'auto';
  }

  override problems(given: ReadonlySet<string>): string[] {
    const range = parseUidRange(this.GANTRY_AGENT_UID_RANGE);
    return [...timingProblems(this, given), ...this.kafkaIdentityProblems(), ...(typeof range === 'string' ? [`GANTRY_AGENT_UID_RANGE ${range}`] : [])];
  }

  /** A real agent is its node's own principal; a simulated fleet has no node principal to be (ADR 0034). */
  private kafkaIdentityProblems(): string[] {
    const m = this.KAFKA_SASL_MECHANISM;
    if (this.GANTRY_SIM_NODES === 0) {
      if (m !== undefined && m !== 'oauthbearer') {
        return [
          `KAFKA_SASL_MECHANISM=${m}: a real agent (GANTRY_SIM_NODES=0) connects as its node's own principal, KAFKA_SASL_MECHANISM=oauthbearer with tokens from the gateway (unset only for a broker without authentication); a shared user is a simulated fleet's`,
        ];
      }
      if (m === 'oauthbearer' && !this.tokenGatewayUrl)
        return ['KAFKA_SASL_MECHANISM=oauthbearer needs GANTRY_GATEWAY_URL (or GANTRY_ENROLL_URL): where the agent asks for its Kafka tokens'];
    } else if (m === 'oauthbearer') {
      return [
        `KAFKA_SASL_MECHANISM=oauthbearer is for a real agent: a simulated fleet (GANTRY_SIM_NODES=${this.GANTRY_SIM_NODES}) connects with its own SCRAM user`,
      ];
    }
    return [];
  }
}

import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GantryClient } from '@gantry/client';
import { ServiceProcess, Stack, fleetAgentEnv, waitFor } from '@gantry/stack';
import { InvariantResult } from './invariants';

/** The hostile tenant's owner: its jobs are its own, not the load's. */
export const TENANT_OWNER = 'chaos-tenant';
/** The tenant's node has GPUs no simulated node has, so its jobs land there and only there. */
const TENANT_GPU_MODEL = 'T4';

/**
 * What a hostile tenant tries (contract 5.1), one script per job in turn, each saying what it saw
 * in its log: read every secret it can reach (/proc, env, the control plane's files), fork many
 * processes, fill /dev/shm, and signal everything it can see. `uid=<n>` first: evidence it ran as
 * a tenant. The forks are bounded (a real fork bomb needs a pids limit the agent does not set yet).
 */
function hostileScripts(root: string): string[] {
  const head = 'echo "uid=$(id -u)"';
  return [
    `${head}; cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n'; env; cat ${root}/.cache/secrets/* ${root}/.cache/kafka/*/credentials.json /proc/1/environ 2>&1 | head -c 4000`,
    `${head}; for i in $(seq 1 200); do sleep 30 & done; echo forked; sleep 2; kill -9 -1`,
    `${head}; dd if=/dev/zero of=/dev/shm/fill bs=1M count=100000 2>&1 | tail -1; df -k /dev/shm | tail -1`,
    `${head}; for p in /proc/[0-9]*; do kill -TERM "\${p#/proc/}" 2>/dev/null; done; kill -9 -1`,
  ];
}

/**
 * A tenant that submits hostile jobs through the API during the whole chaos run, with a user token
 * of its own, to a real agent of its own (the load's simulated fleet runs nothing): one node with a
 * fake inventory of four T4s, every job sandboxed as the agent does by default (ADR 0033). At the
 * end, `check` reads every job's log back through the API: none may hold a secret of the control
 * plane, every one that ran must have run as an unprivileged uid, and the agent must have
 * outlived its tenants.
 */
export class HostileTenant {
  readonly jobIds: string[] = [];
  readonly refused: string[] = [];
  private client: GantryClient | null = null;
  private timer: NodeJS.Timeout | null = null;
  private sent = 0;
  readonly agent: ServiceProcess;

  constructor(private readonly o: { stack: Stack; root: string; workDir: string; intervalMs: number; adminToken: string; gatewayUrl: string }) {
    mkdirSync(o.workDir, { recursive: true });
    const smi = join(o.workDir, 'nvidia-smi');
    const csv = Array.from({ length: 4 }, (_, i) => `${i}, NVIDIA ${TENANT_GPU_MODEL}, 15360, 0, 0, P0`).join('\n');
    writeFileSync(smi, `#!/bin/sh\nprintf '%s\\n' '${csv.replace(/\n/g, "' '")}'\n`);
    chmodSync(smi, 0o755);
    this.agent = o.stack.extra('tenant-agent', 'node-agent', {
      ...fleetAgentEnv({ nodes: 0, prefix: 'chaos-tenant', executor: 'process', workDir: join(o.workDir, 'agent') }),
      GANTRY_NODE_ID: 'chaos-tenant-00000',
      GANTRY_NVIDIA_SMI: smi,
      GANTRY_AGENT_CONTAINER_RUNTIME: 'none',
    });
  }

  get nodeId(): string {
    return 'chaos-tenant-00000';
  }

  async start(): Promise<void> {
    this.agent.start();
    await this.agent.ready(120_000);
    const admin = new GantryClient({ baseUrl: this.o.gatewayUrl, token: this.o.adminToken });
    this.client = new GantryClient({ baseUrl: this.o.gatewayUrl, token: (await admin.createToken(TENANT_OWNER, 'user')).token });
    await waitFor(`${this.nodeId} registered`, async () => (await admin.getNode(this.nodeId).catch(() => null))?.health === 'HEALTHY', {
      timeoutMs: 60_000,
      intervalMs: 500,
    });
    const scripts = hostileScripts(this.o.root);
    this.timer = setInterval(() => {
      const script = scripts[this.sent++ % scripts.length];
      this.client!.createJob({
        name: `hostile-${this.sent}`,
        image: 'none',
        command: ['sh', '-c', script],
        maxRetries: 0,
        labels: { chaos: 'hostile' },
        resources: { gpus: 1, gpuModel: TENANT_GPU_MODEL, cpuCores: 1, memoryMiB: 256 },
      }).then(
        ({ job }) => this.jobIds.push(job.id),
        (e: Error) => this.refused.push(e.message),
      );
    }, this.o.intervalMs);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** Reads every hostile job's log through the API and judges what the tenant saw. */
  async check(secrets: string[], crashes: Array<{ service: string }>): Promise<InvariantResult[]> {
    const leaked: string[] = [];
    const privileged: string[] = [];
    let ran = 0;
    for (const id of this.jobIds) {
      let log = '';
      try {
        for await (const chunk of this.client!.jobLogs(id, {}, AbortSignal.timeout(10_000))) log += chunk;
      } catch {
        continue; // never placed (cancelled by the drain, or its node was down): nothing ran
      }
      const uid = /^uid=(\d+)$/m.exec(log);
      if (uid) ran++;
      if (uid && Number(uid[1]) === 0) privileged.push(id);
      const found = secrets.filter((s) => log.includes(s));
      if (found.length) leaked.push(`${id}: ${found.length} secret(s) in its log`);
    }
    const mk = (name: string, bad: string[], detail: string): InvariantResult => ({
      name,
      ok: bad.length === 0,
      violations: bad.length,
      detail,
      examples: bad.slice(0, 10),
    });
    const agentCrashes = crashes.filter((c) => c.service === this.agent.opts.name).map((c) => `${c.service} exited on its own`);
    return [
      mk(
        'hostile tenant read no secret',
        [...leaked, ...(ran === 0 ? ['no hostile job ran'] : [])],
        `${this.jobIds.length} hostile jobs submitted (${this.refused.length} refused), ${ran} ran; ${secrets.length} secrets looked for in their logs`,
      ),
      mk('hostile tenant ran unprivileged', privileged, `every hostile job that ran said its uid; none may be 0`),
      mk('the agent outlived its hostile tenant', agentCrashes, `${this.agent.opts.name} on ${this.nodeId}: forks, /dev/shm filled, kill -9 -1 from its jobs`),
    ];
  }
}

import { Command, CommanderError, Option } from 'commander';
import { randomUUID } from 'node:crypto';
import { GantryApiError, GantryClient, Job } from '@gantry/client';
import { CliError, EXIT, UsageError, describeFailure } from './cli-error';
import { DEFAULT_URL, configPath, loadConfig, resolveConnection, saveConfig } from './cli-config';
import { COMPLETION_SCRIPTS, completionCandidates } from './completion';
import { renderUsageCsv, USAGE_GRANULARITIES, USAGE_GROUP_KEYS, type UsageGroupKey } from '@gantry/domain';
import {
  EVENT_COLUMNS,
  JOB_COLUMNS,
  NODE_COLUMNS,
  QUEUE_COLUMNS,
  eventLine,
  explanationLines,
  nodeTrustLines,
  retryPolicyLine,
  summaryLines,
  usageColumns,
} from './format';
import { InventoryFlags, declaredInventory, inventoryFromFlags } from './inventory-flags';
import { SubmitFlags, buildJobSpec } from './job-spec';
import { UsageFlags, usageQueryFromFlags } from './usage-flags';
import { OutputFormat, Printer, outputOption } from './output';

/** States a job never leaves (contract §2). */
const TERMINAL_STATES: ReadonlySet<string> = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED']);

const examples = (lines: string[]) => `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;

interface Io {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  env: NodeJS.ProcessEnv;
}

/**
 * The `gantry` command tree (contract §4.6). Every read takes `-o json`; streams take `-f`.
 * Returns the exit code: 0 ok, 1 an error (a problem's title and detail are printed), 2 usage.
 */
export async function runCli(argv: string[], io: Io = { stdout: process.stdout, stderr: process.stderr, env: process.env }): Promise<number> {
  let baseUrl = DEFAULT_URL;
  const program = new Command('gantry');
  const client = (): GantryClient => {
    const { url, token } = resolveConnection(program.opts(), io.env);
    baseUrl = url;
    if (!token) throw new CliError('no token: run `gantry login`, set GANTRY_TOKEN or pass --token');
    return new GantryClient({ baseUrl: url, token });
  };
  const printer = (opts: { output?: OutputFormat }) => new Printer(opts.output ?? 'table', io.stdout);

  program
    .description('Submit, watch and cancel jobs on a Gantry GPU cluster; manage queues, nodes and tokens.')
    .version('0.1.0')
    .option('--url <url>', `gateway URL (else GANTRY_URL, else the saved login, else ${DEFAULT_URL})`)
    .option('--token <token>', 'bearer token (else GANTRY_TOKEN, else the saved login)')
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) })
    .exitOverride()
    .addHelpText(
      'after',
      `
Configuration: ${configPath(io.env)} (written by \`gantry login\`), overridden by GANTRY_URL and
GANTRY_TOKEN, overridden by --url and --token. Exit codes: 0 ok, 1 error, 2 usage.
${examples([
  'gantry login --url http://127.0.0.1:8080 --token gantry-admin-…',
  'gantry submit -f job.yaml',
  'gantry submit --gpus 1 -- python train.py',
  'gantry ls --state RUNNING',
  'gantry events -f <job-id>',
  'gantry describe <job-id>',
  'gantry explain <job-id>',
])}`,
    );

  program
    .command('login')
    .description('Save the gateway URL and a token for later commands (checked against the gateway first)')
    .option('--url <url>', 'gateway URL')
    .option('--token <token>', 'bearer token (or give it on stdin)')
    .addHelpText('after', examples(['gantry login --url http://127.0.0.1:8080 --token gnt_…', 'echo "$TOKEN" | gantry login --url https://gantry.example.com']))
    .action(async (opts: { url?: string; token?: string }) => {
      const saved = loadConfig(configPath(io.env));
      const url = (opts.url ?? program.opts().url ?? saved.url ?? DEFAULT_URL).replace(/\/+$/, '');
      const token = opts.token ?? program.opts().token ?? (process.stdin.isTTY ? undefined : (await readStdin()).trim());
      if (!token) throw new UsageError('give the token with --token or on stdin');
      baseUrl = url;
      await new GantryClient({ baseUrl: url, token }).listQueues(); // any token may read queues: proves URL and token
      saveConfig({ url, token }, configPath(io.env));
      io.stdout.write(`logged in to ${url} (saved in ${configPath(io.env)})\n`);
    });

  program
    .command('submit')
    .description('Submit a job from a YAML/JSON file, flags, or both (flags win); prints its id')
    .option('-f, --file <path>', 'job file, YAML or JSON (- for stdin)')
    .option('--name <name>', 'job name (default: the command)')
    .option('--image <image>', 'container image (default: none)')
    .option('-q, --queue <queue>', 'queue (default: default)')
    .option('--gpus <n>', 'GPUs per node')
    .option('--gpu-model <model>', 'GPU model, e.g. H100')
    .option('--cpus <n>', 'CPU cores per node')
    .option('--memory <MiB>', 'memory per node, MiB')
    .option('--nodes <n>', 'gang size: nodes acquired together')
    .option('--max-retries <n>', 're-placements after a lost attempt')
    .option('--retries <n>', 'retry policy: attempts after the first (lost, or failed with a listed exit code)')
    .option('--retry-on-exit-codes <codes>', 'retry policy: exit codes that are retried, comma-separated (e.g. 1,137)')
    .option('--backoff <seconds>', 'retry policy: first wait between attempts (doubles, with jitter)')
    .option('--max-backoff <seconds>', 'retry policy: longest wait between attempts')
    .option('--depends-on <job-id[:succeeded|finished]>', 'wait for this job to succeed (default) or to end at all (repeatable)', collect, [])
    .option('--max-runtime <seconds>', 'longest an attempt may run (also what explain estimates from)')
    .option('-e, --env <KEY=VALUE>', 'environment variable (repeatable)', collect, [])
    .option('-l, --label <KEY=VALUE>', 'label (repeatable)', collect, [])
    .option('--idempotency-key <key>', 'reuse to make a retried submit return the same job (default: a new key per submit)')
    .option('-w, --watch', 'then follow its events until it ends')
    .addOption(outputOption())
    .argument('[command...]', 'the command to run, after --')
    .addHelpText(
      'after',
      `
A job file holds the fields of POST /v1/jobs:

  name: train-7b
  image: registry/pytorch:24.05
  command: [python, train.py]
  env: {EPOCHS: "3"}
  resources: {gpus: 8, gpuModel: H100, cpuCores: 32, memoryMiB: 262144}
  nodes: 1
  maxRuntimeSeconds: 7200
  retryPolicy: {maxRetries: 3, backoffSeconds: 10, maxBackoffSeconds: 600, retryOnExitCodes: [137]}
  dependsOn: [{jobId: 0b7c8f4e-…, condition: succeeded}]
${examples([
  'gantry submit -f train.yaml',
  'gantry submit -f train.yaml --queue research --gpus 4',
  'gantry submit --name hello -- sh -c "echo hi"',
  'gantry submit -w -- sleep 5',
  'gantry submit --retries 3 --retry-on-exit-codes 1,137 --backoff 30 -- python flaky.py',
  'gantry submit --depends-on 0b7c8f4e-…:finished --max-runtime 3600 -- python eval.py',
])}`,
    )
    .action(async (command: string[], opts: SubmitFlags & { idempotencyKey?: string; watch?: boolean; output: OutputFormat }) => {
      const spec = buildJobSpec(opts, command);
      const api = client();
      // One key per logical submit: the client's retries reuse it, so a lost answer never starts a second job.
      const { job, replayed } = await api.createJob(spec, opts.idempotencyKey ?? randomUUID());
      const out = printer(opts);
      if (out.format === 'json') out.json(job);
      else out.line(`${job.id}${replayed ? ' (replayed: this key had already submitted it)' : ''}`);
      if (opts.watch) await followJob(api, job.id, out, io);
    });

  program
    .command('ls')
    .alias('list')
    .description('List jobs, oldest first (users see their own)')
    .option('-q, --queue <queue>', 'only this queue')
    .option('-s, --state <state>', 'only this state (QUEUED, SCHEDULED, RUNNING, SUCCEEDED, FAILED, CANCELLED)')
    .option('--owner <owner>', "only this owner's (operators)")
    .option('--limit <n>', 'at most this many', '100')
    .option('-w, --watch', 'list again whenever a job changes')
    .addOption(outputOption())
    .addHelpText('after', examples(['gantry ls', 'gantry ls --state QUEUED -o json', 'gantry ls --queue research --watch']))
    .action(async (opts: { queue?: string; state?: string; owner?: string; limit: string; watch?: boolean; output: OutputFormat }) => {
      const limit = positiveInt(opts.limit, '--limit');
      const api = client();
      const list = async () => {
        const jobs: Job[] = [];
        for await (const j of api.listAllJobs({
          queue: opts.queue,
          state: opts.state as Job['state'] | undefined,
          owner: opts.owner,
          limit: Math.min(limit, 500),
        })) {
          jobs.push(j);
          if (jobs.length >= limit) break;
        }
        printer(opts).show(jobs, (rows) => printer(opts).table(rows, JOB_COLUMNS));
      };
      await list();
      if (!opts.watch) return;
      let timer: NodeJS.Timeout | null = null;
      for await (const _event of api.followEvents({ queue: opts.queue })) {
        // Many events come in bursts: list once per burst.
        timer ??= setTimeout(() => {
          timer = null;
          if (opts.output !== 'json') io.stdout.write('\n');
          void list();
        }, 500);
      }
    });

  program
    .command('get')
    .description('Show one job')
    .argument('<job-id>')
    .addOption(outputOption())
    .action(async (id: string, opts: { output: OutputFormat }) => {
      const job = await client().getJob(id);
      printer(opts).show(job, (j) => printer(opts).table([j], JOB_COLUMNS));
    });

  program
    .command('describe')
    .description('Everything about a job: spec, placement, pending reason, events')
    .argument('<job-id>')
    .addOption(outputOption())
    .addHelpText('after', examples(['gantry describe 0b7c8f4e-…', 'gantry describe 0b7c8f4e-… -o json | jq .events']))
    .action(async (id: string, opts: { output: OutputFormat }) => {
      const api = client();
      const [job, events] = await Promise.all([api.getJob(id), api.jobEvents(id)]);
      // Only a queued job waits; it may have been placed since the read (409): then there is nothing to explain.
      const explanation =
        job.state === 'QUEUED' ? await api.explainJob(id).catch((e) => (e instanceof GantryApiError && e.status === 409 ? null : Promise.reject(e))) : null;
      const out = printer(opts);
      out.show({ ...job, events, ...(explanation ? { explanation } : {}) }, () => {
        const r = job.resources;
        const rows: Array<[string, string]> = [
          ['ID', job.id],
          ['Name', job.name],
          ['Owner', job.owner],
          ['Queue', job.queue],
          ['State', `${job.state}${job.cancelRequested ? ' (cancel requested)' : ''}`],
          ['Pending reason', job.pendingReason ?? '-'],
          ['Attempt', `${job.attempt} (max retries ${job.maxRetries})`],
          ['Retry policy', retryPolicyLine(job.retryPolicy)],
          ['Depends on', job.dependsOn.length ? job.dependsOn.map((d) => `${d.jobId} (${d.condition})`).join(', ') : '-'],
          ['Image', job.image],
          ['Command', JSON.stringify(job.command)],
          ['Resources', `${r.gpus} GPU${r.gpuModel ? ` ${r.gpuModel}` : ''}, ${r.cpuCores} cores, ${r.memoryMiB} MiB per node, ${job.nodes} node(s)`],
          [
            'Placement',
            job.placements.length
              ? job.placements.map((p) => `rank ${p.rank}: ${p.nodeId}${p.gpuIndices.length ? ` (GPUs ${p.gpuIndices.join(',')})` : ''}`).join(', ')
              : '-',
          ],
          ['Max runtime', job.maxRuntimeSeconds ? `${job.maxRuntimeSeconds} s` : '-'],
          ['Exit code', job.exitCode === null || job.exitCode === undefined ? '-' : String(job.exitCode)],
          ['Reason', job.reason ?? '-'],
          ['Created', job.createdAt],
          ['Started', job.startedAt ?? '-'],
          ['Finished', job.finishedAt ?? '-'],
          [
            'Labels',
            Object.entries(job.labels)
              .map(([k, v]) => `${k}=${v}`)
              .join(', ') || '-',
          ],
        ];
        for (const [k, v] of rows) out.line(`${`${k}:`.padEnd(16)}${v}`);
        if (explanation) {
          out.line();
          out.line('Why it waits (gantry explain):');
          explanationLines(explanation).forEach((l) => out.line(`  ${l}`));
        }
        out.line();
        out.line('Events:');
        out.table(events, EVENT_COLUMNS);
      });
    });

  program
    .command('explain')
    .description('Why a queued job waits: every blocker with its deficit, changes that would let it start, its position and estimated start')
    .argument('<job-id>')
    .addOption(outputOption())
    .addHelpText(
      'after',
      `
A job that is not QUEUED does not wait: that is an error (exit 1).
${examples(['gantry explain 0b7c8f4e-…', 'gantry explain 0b7c8f4e-… -o json | jq .blockers'])}`,
    )
    .action(async (id: string, opts: { output: OutputFormat }) => {
      const e = await client().explainJob(id);
      const out = printer(opts);
      out.show(e, () => explanationLines(e).forEach((l) => out.line(l)));
    });

  program
    .command('cancel')
    .description('Cancel jobs (a running one stops when its agent reports; cancelling an ended job is a no-op)')
    .argument('<job-id...>')
    .addOption(outputOption())
    .action(async (ids: string[], opts: { output: OutputFormat }) => {
      const api = client();
      const jobs: Job[] = [];
      for (const id of ids) jobs.push(await api.cancelJob(id));
      printer(opts).show(jobs, (list) =>
        list.forEach((j) => printer(opts).line(`${j.id}: ${j.state}${j.cancelRequested && !j.finishedAt ? ' (cancel requested)' : ''}`)),
      );
    });

  program
    .command('events')
    .description("A job's events; with -f, live until it ends. Without a job id: every visible job's events (needs -f)")
    .argument('[job-id]')
    .option('-f, --follow', 'stream events as they happen (ends with the job)')
    .option('-q, --queue <queue>', 'all jobs: only this queue')
    .option('--since <event-id>', 'resume after this event id (a seq, or a position printed with -o json)')
    .addOption(outputOption())
    .addHelpText('after', examples(['gantry events <job-id>', 'gantry events -f <job-id>', 'gantry events -f --queue research -o json']))
    .action(async (id: string | undefined, opts: { follow?: boolean; queue?: string; since?: string; output: OutputFormat }) => {
      const api = client();
      const out = printer(opts);
      if (!id) {
        if (!opts.follow) throw new UsageError('without a job id, events needs -f (every visible job, live)');
        for await (const e of api.followEvents({ queue: opts.queue, lastEventId: opts.since })) {
          if (out.format === 'json') out.jsonLine(e);
          else out.line(eventLine(e, true));
        }
        return;
      }
      if (opts.follow) return followJob(api, id, out, io, opts.since);
      const events = await api.jobEvents(id);
      out.show(events, (rows) => out.table(rows, EVENT_COLUMNS));
    });

  program
    .command('logs')
    .description("A job's output (stdout and stderr of one rank of one attempt); -f follows it while it runs")
    .argument('<job-id>')
    .option('-f, --follow', 'keep streaming while the attempt runs')
    .option('--attempt <n>', 'attempt (default: the current one)')
    .option('--rank <n>', 'gang rank (default: 0)')
    .option('--tail <lines>', 'only the last this many lines')
    .addHelpText('after', examples(['gantry logs <job-id>', 'gantry logs -f --rank 1 <job-id>']))
    .action(async (id: string, opts: { follow?: boolean; attempt?: string; rank?: string; tail?: string }) => {
      const api = client();
      // A job not yet placed has no log: -f waits for its first attempt (or its end) instead of failing.
      if (opts.follow && !opts.attempt) {
        for (let job = await api.getJob(id); job.attempt === 0 && !TERMINAL_STATES.has(job.state); job = await api.getJob(id)) {
          await new Promise((r) => setTimeout(r, 1000));
        }
      }
      // GET /v1/jobs/{id}/logs (contract §4.4): text/plain, written as it arrives.
      const logs = api.jobLogs(id, {
        attempt: opts.attempt ? positiveInt(opts.attempt, '--attempt') : undefined,
        rank: opts.rank ? nonNegativeInt(opts.rank, '--rank') : undefined,
        tailLines: opts.tail ? positiveInt(opts.tail, '--tail') : undefined,
        follow: opts.follow ? 'true' : undefined,
      });
      for await (const chunk of logs) io.stdout.write(chunk);
    });

  program
    .command('usage')
    .description("GPU- and CPU-time used per hour, day or month (UTC), grouped by owner, queue or GPU model: yours, or everyone's for an operator")
    .requiredOption('--from <date>', 'start, included: a date (UTC midnight) or a date-time with a zone on a whole UTC hour')
    .option('--to <date>', 'end, excluded, on a whole UTC hour (default: the next whole hour, so running attempts count up to now)')
    .option('--by <keys>', `group by any of ${USAGE_GROUP_KEYS.join(', ')} (comma-separated; default: one row per bucket)`)
    .addOption(new Option('--granularity <size>', 'bucket size').choices([...USAGE_GRANULARITIES]).default('day'))
    .addOption(
      new Option('-o, --output <format>', 'table for people (GPU-hours), json or csv for programs (exact seconds)')
        .choices(['table', 'json', 'csv'])
        .default('table'),
    )
    .addHelpText(
      'after',
      `
A row's start is its bucket's calendar start; only the part inside [from, to) counts, so the rows of
any split of a range add up to the range. An attempt counts in the bucket where it started, a job in
the bucket where its first attempt started.
${examples([
  'gantry usage --from 2026-01-01 --to 2026-02-01 --by owner,queue',
  'gantry usage --from 2026-01-01 --to 2026-02-01 --by owner --granularity day -o csv > january.csv',
  'gantry usage --from 2026-01-01 --granularity month --by gpuModel -o json',
])}`,
    )
    .action(async (opts: UsageFlags & { output: OutputFormat | 'csv' }) => {
      const query = usageQueryFromFlags(opts, Date.now());
      const rows = await client().usage(query);
      const groupBy = (query.groupBy ? query.groupBy.split(',') : []) as UsageGroupKey[];
      if (opts.output === 'csv') io.stdout.write(renderUsageCsv(rows, groupBy));
      else printer({ output: opts.output }).show({ items: rows }, (r) => printer(opts as { output: OutputFormat }).table(r.items, usageColumns(groupBy)));
    });

  const queues = program.command('queues').description('Queues: priority bands and GPU quotas (`gantry queues` lists them)');
  queues
    .command('ls', { isDefault: true })
    .description('List queues with their usage')
    .addOption(outputOption())
    .action(async (opts: { output: OutputFormat }) => {
      const list = await client().listQueues();
      printer(opts).show(list, (rows) => printer(opts).table(rows, QUEUE_COLUMNS));
    });
  queues
    .command('get')
    .argument('<name>')
    .description('Show one queue')
    .addOption(outputOption())
    .action(async (name: string, opts: { output: OutputFormat }) => {
      const q = await client().getQueue(name);
      printer(opts).show(q, (row) => printer(opts).table([row], QUEUE_COLUMNS));
    });
  queues
    .command('create')
    .argument('<name>')
    .description('Create a queue (operators)')
    .requiredOption('--priority <0..100>', 'priority band; higher bands are served first')
    .option('--quota-gpus <n>', 'most GPUs its jobs may hold at once (default: unlimited)')
    .option('--weight <w>', 'fair-share weight within its band')
    .option('--parent <queue>', "the queue whose cohort it joins: its quota becomes a guarantee, and it may borrow siblings' unused guarantee")
    .option('--borrowing-limit-gpus <n>', 'GPUs it may hold beyond its guarantee (with --parent; default 0)')
    .addOption(outputOption())
    .addHelpText(
      'after',
      examples([
        'gantry queues create research --priority 10 --quota-gpus 64',
        'gantry queues create vision --priority 10 --parent research --quota-gpus 16 --borrowing-limit-gpus 16',
      ]),
    )
    .action(
      async (
        name: string,
        opts: { priority: string; quotaGpus?: string; weight?: string; parent?: string; borrowingLimitGpus?: string; output: OutputFormat },
      ) => {
        const more: Parameters<GantryClient['createQueue']>[3] = {};
        if (opts.weight !== undefined) more.weight = Number(opts.weight);
        if (opts.parent !== undefined) more.parent = opts.parent;
        if (opts.borrowingLimitGpus !== undefined) more.borrowingLimit = { gpus: nonNegativeInt(opts.borrowingLimitGpus, '--borrowing-limit-gpus') };
        const q = await client().createQueue(
          name,
          nonNegativeInt(opts.priority, '--priority'),
          opts.quotaGpus === undefined ? null : nonNegativeInt(opts.quotaGpus, '--quota-gpus'),
          more,
        );
        printer(opts).show(q, (row) => printer(opts).table([row], QUEUE_COLUMNS));
      },
    );
  queues
    .command('update')
    .argument('<name>')
    .description('Change a queue (operators)')
    .option('--priority <0..100>', 'priority band')
    .option('--quota-gpus <n|unlimited>', 'GPU quota')
    .option('--weight <w>', 'fair-share weight')
    .option('--parent <queue|none>', 'the queue whose cohort it joins; none: no parent')
    .option('--borrowing-limit-gpus <n>', 'GPUs it may hold beyond its guarantee')
    .addOption(outputOption())
    .action(
      async (
        name: string,
        opts: { priority?: string; quotaGpus?: string; weight?: string; parent?: string; borrowingLimitGpus?: string; output: OutputFormat },
      ) => {
        const changes: Parameters<GantryClient['updateQueue']>[1] = {};
        if (opts.parent !== undefined) changes.parent = opts.parent === 'none' ? null : opts.parent;
        if (opts.borrowingLimitGpus !== undefined) changes.borrowingLimit = { gpus: nonNegativeInt(opts.borrowingLimitGpus, '--borrowing-limit-gpus') };
        if (opts.priority !== undefined) changes.priority = nonNegativeInt(opts.priority, '--priority');
        if (opts.weight !== undefined) changes.weight = Number(opts.weight);
        if (opts.quotaGpus !== undefined) changes.quota = { gpus: opts.quotaGpus === 'unlimited' ? null : nonNegativeInt(opts.quotaGpus, '--quota-gpus') };
        const q = await client().updateQueue(name, changes);
        printer(opts).show(q, (row) => printer(opts).table([row], QUEUE_COLUMNS));
      },
    );
  queues
    .command('delete')
    .argument('<name>')
    .description('Delete an empty queue (operators)')
    .action(async (name: string) => {
      await ensureOk(await client().request('DELETE', `/v1/queues/${encodeURIComponent(name)}`));
      io.stdout.write(`deleted queue ${name}\n`);
    });

  const nodes = program.command('nodes').description('Nodes: capacity, health, cordons (`gantry nodes` lists them)');
  nodes
    .command('ls', { isDefault: true })
    .description('List nodes')
    .option('--health <health>', 'HEALTHY, DEGRADED or UNHEALTHY')
    .option('--gpu-model <model>', 'only nodes of this GPU model')
    .option('--zone <zone>', 'only this zone')
    .option('--limit <n>', 'at most this many', '500')
    .addOption(outputOption())
    .action(async (opts: { health?: string; gpuModel?: string; zone?: string; limit: string; output: OutputFormat }) => {
      const limit = positiveInt(opts.limit, '--limit');
      const api = client();
      const all: Awaited<ReturnType<GantryClient['getNode']>>[] = [];
      let cursor: string | undefined;
      do {
        const page = await api.listNodes({
          health: opts.health as never,
          gpuModel: opts.gpuModel,
          zone: opts.zone,
          limit: Math.min(500, limit - all.length),
          cursor,
        });
        all.push(...page.items);
        cursor = page.nextCursor ?? undefined;
      } while (cursor && all.length < limit);
      printer(opts).show(all, (rows) => printer(opts).table(rows, NODE_COLUMNS));
    });
  nodes
    .command('describe')
    .argument('<node-id>')
    .description('A node with its telemetry and its history')
    .addOption(outputOption())
    .action(async (id: string, opts: { output: OutputFormat }) => {
      const api = client();
      const [node, events] = await Promise.all([api.getNode(id), api.nodeEvents(id)]);
      const out = printer(opts);
      out.show({ ...node, events }, () => {
        out.table([node], NODE_COLUMNS);
        out.line();
        for (const l of nodeTrustLines(node)) out.line(l);
        out.line();
        out.line('Events:');
        out.table(events, [
          { header: 'AT', value: (e) => e.at },
          { header: 'TYPE', value: (e) => e.type },
          {
            header: 'DETAIL',
            value: (e) => JSON.stringify(Object.fromEntries(Object.entries(e).filter(([k]) => !['at', 'type', 'id', 'nodeId'].includes(k)))),
            shrink: true,
          },
        ]);
      });
    });
  for (const [name, cordon] of [
    ['cordon', true],
    ['uncordon', false],
  ] as const) {
    nodes
      .command(name)
      .argument('<node-id...>')
      .description(cordon ? 'Give nodes no new work (operators)' : 'Make nodes placeable again (operators)')
      .addOption(outputOption())
      .action(async (ids: string[], opts: { output: OutputFormat }) => {
        const api = client();
        const done = [];
        for (const id of ids) done.push(cordon ? await api.cordonNode(id) : await api.uncordonNode(id));
        printer(opts).show(done, (list) => list.forEach((n) => printer(opts).line(`${n.id}: ${n.cordoned ? 'cordoned' : 'uncordoned'}`)));
      });
  }
  nodes
    .command('drain')
    .argument('<node-id...>')
    .description('Cordon nodes now; after the grace, what still runs there is requeued elsewhere (NODE_DRAINED, no retry used). Operators')
    .option('--grace <seconds>', 'how long running attempts may go on (0..86400)', '300')
    .addOption(outputOption())
    .addHelpText(
      'after',
      `
The node stays cordoned after its drain (event DRAINED); \`gantry nodes uncordon\` before the grace is
over cancels the drain.
${examples(['gantry nodes drain gpu-0042 --grace 600', 'gantry nodes drain gpu-0042 gpu-0043 --grace 0'])}`,
    )
    .action(async (ids: string[], opts: { grace: string; output: OutputFormat }) => {
      const grace = nonNegativeInt(opts.grace, '--grace');
      if (grace > 86_400) throw new UsageError(`--grace must be at most 86400 seconds, got ${grace}`);
      const api = client();
      const done = [];
      for (const id of ids) done.push(await api.drainNode(id, grace));
      printer(opts).show(done, (list) => list.forEach((n) => printer(opts).line(`${n.id}: cordoned, draining (what runs there is requeued after ${grace} s)`)));
    });
  const inventoryOptions = (c: ReturnType<typeof nodes.command>) =>
    c
      .option('--gpus <model:count>', 'its GPUs, e.g. H100:8, or none')
      .option('--cpu-cores <n>', 'its CPU cores')
      .option('--memory-mib <n>', 'its memory, MiB')
      .option('--address <host>', 'where it listens (logs are read only there), or none to pin what it reports');
  inventoryOptions(
    nodes
      .command('enroll')
      .argument('<node-id>')
      .description("Issue (or rotate) a node's agent credential: everything its agent needs, and optionally its inventory (operators)")
      .option('--revoke', "revoke the node's credential instead"),
  )
    .addOption(outputOption())
    .addHelpText(
      'after',
      `
With an inventory, placement never believes more of the node than it (whatever it reports); without
one, the first inventory the node reports is pinned.
${examples(['gantry nodes enroll gpu-0042 --gpus H100:8 --cpu-cores 96 --memory-mib 1048576 --address 10.0.4.2'])}`,
    )
    .action(async (id: string, opts: InventoryFlags & { revoke?: boolean; output: OutputFormat }) => {
      const api = client();
      const path = `/v1/nodes/${encodeURIComponent(id)}/enrollment`;
      if (opts.revoke) {
        await ensureOk(await api.request('DELETE', path));
        io.stdout.write(`revoked the credential of ${id}\n`);
        return;
      }
      const inventory = declaredInventory(opts);
      const body = await ensureOk(await api.request('POST', path, inventory ? { inventory } : undefined));
      printer(opts).json(body); // shown once: the credential is in it
    });
  inventoryOptions(
    nodes.command('declare').argument('<node-id>').description("Change a node's pinned inventory: the flags given replace those fields (operators)"),
  )
    .addOption(outputOption())
    .addHelpText('after', examples(['gantry nodes declare gpu-0042 --gpus H100:4', 'gantry nodes declare gpu-0042 --address 10.0.4.3']))
    .action(async (id: string, opts: InventoryFlags & { output: OutputFormat }) => {
      const patch = inventoryFromFlags(opts);
      if (Object.keys(patch).length === 0) throw new UsageError('give at least one of --gpus, --cpu-cores, --memory-mib, --address');
      const node = await client().updateNodeInventory(id, patch);
      printer(opts).show(node, (n) => nodeTrustLines(n).forEach((l) => printer(opts).line(l)));
    });

  program
    .command('top')
    .description('The cluster at a glance: nodes by health, GPUs by model, utilisation, jobs by state')
    .option('-w, --watch', 'refresh every 2 s')
    .addOption(outputOption())
    .action(async (opts: { watch?: boolean; output: OutputFormat }) => {
      const api = client();
      for (;;) {
        const s = await api.clusterSummary();
        printer(opts).show(s, (v) => summaryLines(v).forEach((l) => printer(opts).line(l)));
        if (!opts.watch) return;
        await new Promise((r) => setTimeout(r, 2000));
        if (opts.output !== 'json') io.stdout.write('\n');
      }
    });

  const tokens = program.command('tokens').description('Bearer tokens (operators)');
  tokens
    .command('create')
    .description('Mint a token; its secret is shown once')
    .requiredOption('--owner <owner>', 'whose jobs it acts for')
    .addOption(new Option('--role <role>', 'user or operator').choices(['user', 'operator']).default('user'))
    .option('--expires-at <time>', 'RFC 3339 expiry')
    .option('--description <text>', 'what it is for')
    .addOption(outputOption())
    .addHelpText(
      'after',
      examples(['gantry tokens create --owner team-a', 'gantry tokens create --owner ci --role user --expires-at 2027-01-01T00:00:00Z -o json']),
    )
    .action(async (opts: { owner: string; role: 'user' | 'operator'; expiresAt?: string; description?: string; output: OutputFormat }) => {
      const api = client();
      const extra = { ...(opts.expiresAt ? { expiresAt: opts.expiresAt } : {}), ...(opts.description ? { description: opts.description } : {}) };
      const t = Object.keys(extra).length
        ? await ensureOk<{ id: string; token: string }>(await api.request('POST', '/v1/tokens', { owner: opts.owner, role: opts.role, ...extra }))
        : await api.createToken(opts.owner, opts.role);
      printer(opts).show(t, (v: { id: string; token: string }) => printer(opts).line(`${v.token}\n(id ${v.id}; the secret is not shown again)`));
    });
  tokens
    .command('ls', { isDefault: true })
    .description('List tokens, without their secrets')
    .addOption(outputOption())
    .action(async (opts: { output: OutputFormat }) => {
      const body = await ensureOk<{ items: Array<Record<string, string | null>> }>(await client().request('GET', '/v1/tokens'));
      printer(opts).show(body.items, (rows) =>
        printer(opts).table(
          rows,
          ['id', 'owner', 'role', 'createdAt', 'expiresAt', 'description'].map((k) => ({
            header: k.toUpperCase(),
            value: (r: Record<string, string | null>) => r[k] ?? '-',
            shrink: k === 'description',
          })),
        ),
      );
    });
  tokens
    .command('revoke')
    .argument('<token-id>')
    .description('Revoke a token (effective within a second everywhere)')
    .action(async (id: string) => {
      await ensureOk(await client().request('DELETE', `/v1/tokens/${encodeURIComponent(id)}`));
      io.stdout.write(`revoked token ${id}\n`);
    });

  program
    .command('completion')
    .description('Print a shell completion script')
    .argument('<shell>', 'bash or zsh')
    .addHelpText('after', examples(['source <(gantry completion bash)   # in ~/.bashrc', 'source <(gantry completion zsh)    # in ~/.zshrc']))
    .action((shell: string) => {
      if (shell !== 'bash' && shell !== 'zsh') throw new UsageError(`no completion for ${shell}: bash or zsh`);
      io.stdout.write(COMPLETION_SCRIPTS[shell]);
    });

  program
    .command('__complete', { hidden: true })
    .argument('[words...]')
    .allowUnknownOption()
    .helpOption(false)
    .action((words: string[]) => {
      io.stdout.write(`${completionCandidates(program, words).join('\n')}\n`);
    });

  try {
    await program.parseAsync(argv, { from: 'user' });
    return EXIT.ok;
  } catch (e) {
    if (e instanceof CommanderError) {
      // --help and --version end through here too, with code 0.
      return e.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    const { message, code } = describeFailure(e, baseUrl);
    io.stderr.write(`${message}\n`);
    return code;
  }
}

/** Prints a job's events until its terminal one; -o json prints one event per line. */
async function followJob(api: GantryClient, id: string, out: Printer, _io: Io, since?: string): Promise<void> {
  for await (const e of api.followJobEvents(id, { lastEventId: since })) {
    if (out.format === 'json') out.jsonLine(e);
    else out.line(eventLine(e, false));
  }
}

async function ensureOk<T = unknown>(res: { status: number; body: unknown }): Promise<T> {
  if (res.status >= 400) throw new GantryApiError(res.status, (res.body ?? {}) as object);
  return res.body as T;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function positiveInt(raw: string, flag: string): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1) throw new UsageError(`${flag} must be a whole number of at least 1, got ${JSON.stringify(raw)}`);
  return n;
}

function nonNegativeInt(raw: string, flag: string): number {
  if (!/^\d+$/.test(raw)) throw new UsageError(`${flag} must be a whole number, got ${JSON.stringify(raw)}`);
  return Number(raw);
}

async function readStdin(): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin) text += chunk;
  return text;
}

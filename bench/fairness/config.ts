/** bench:fairness settings, from BENCH_* variables (README.md, "Settings"). */
import { readFileSync } from 'node:fs';
import { numberFromEnv as num } from '@gantry/stack';
import { PolicyName, parsePolicies } from './policies';
import { DEFAULT_TEAMS, TeamSpec } from './trace';

export interface FairnessConfig {
  policies: PolicyName[];
  traceS: number;
  seed: number;
  teams: TeamSpec[];
  /** Where the teams came from: `default` or the BENCH_FAIRNESS_TEAMS file. */
  teamsSource: string;
  loadScale: number;
  nodes: number;
  halfLifeHours: number;
  settleS: number;
  windowS: number;
  stepS: number;
  backlogShare: number;
  shareTolerance: number;
  utilisationFloor: number;
  /** A job counts as waiting (for utilisation, and for its team's backlog) only this long after its submission (timeline.ts). */
  waitGraceS: number;
  heartbeatMs: number;
  pgbenchS: number;
  maxInFlight: number;
  portOffset: number;
  basePort: number;
  kafkaPort: number;
  databaseUrl: string;
  redisUrl: string;
  logLevel: string;
}

/** Checks a team list (from a file or the defaults); throws naming the variable and the team. */
export function validateTeams(teams: unknown, source: string): TeamSpec[] {
  const bad = (msg: string): never => {
    throw new Error(`BENCH_FAIRNESS_TEAMS (${source}): ${msg}`);
  };
  if (!Array.isArray(teams) || teams.length === 0) return bad('a non-empty JSON array of teams');
  const names = new Set<string>();
  for (const t of teams as TeamSpec[]) {
    const name =
      typeof t?.name === 'string' && /^[a-z0-9][a-z0-9-]{0,40}$/.test(t.name)
        ? t.name
        : bad(`team name ${JSON.stringify(t?.name)}: lower-case letters, digits, dashes`);
    if (names.has(name)) bad(`team ${name} twice`);
    names.add(name);
    const positive = (v: unknown, what: string) =>
      typeof v === 'number' && v > 0 && Number.isFinite(v) ? v : bad(`team ${name}: ${what} must be a positive number`);
    positive(t.weight, 'weight');
    if (!Number.isInteger(t.owners) || t.owners < 1) bad(`team ${name}: owners must be a whole number >= 1`);
    positive(t.load, 'load');
    if (!Array.isArray(t.shapes) || t.shapes.length === 0) bad(`team ${name}: shapes must be a non-empty list of [{gpus, nodes}, weight]`);
    for (const [s, w] of t.shapes) {
      if (!Number.isInteger(s?.gpus) || s.gpus < 1 || s.gpus > 8 || !Number.isInteger(s?.nodes) || s.nodes < 1)
        bad(`team ${name}: shape ${JSON.stringify(s)}: gpus 1..8 per node, nodes >= 1`);
      if (s.nodes > 1 && s.gpus !== 8) bad(`team ${name}: a gang's ranks take whole 8-GPU nodes`);
      positive(w, 'a shape weight');
    }
    const r = t.runtime;
    positive(r?.medianS, 'runtime.medianS');
    if (!(typeof r.sigma === 'number' && r.sigma >= 0)) bad(`team ${name}: runtime.sigma must be >= 0`);
    if (!(positive(r.minS, 'runtime.minS') <= positive(r.maxS, 'runtime.maxS'))) bad(`team ${name}: runtime.minS above runtime.maxS`);
    if (!(positive(t.overestimate?.min, 'overestimate.min') >= 1 && t.overestimate.max >= t.overestimate.min))
      bad(`team ${name}: overestimate: 1 <= min <= max`);
  }
  return teams as TeamSpec[];
}

export function loadConfig(): FairnessConfig {
  const env = process.env;
  const teamsFile = env.BENCH_FAIRNESS_TEAMS ?? '';
  const teams = teamsFile ? validateTeams(JSON.parse(readFileSync(teamsFile, 'utf8')), teamsFile) : validateTeams(structuredClone(DEFAULT_TEAMS), 'default');
  const loadScale = num('BENCH_FAIRNESS_LOAD_SCALE', 1);
  const halfLifeHours = num('BENCH_FAIRNESS_HALF_LIFE_HOURS', 0.02);
  const portOffset = num('BENCH_PORT_OFFSET', num('GANTRY_TEST_PORT_OFFSET', 0));
  const c: FairnessConfig = {
    policies: parsePolicies(env.BENCH_FAIRNESS_POLICIES || 'previous,new,new-strict'),
    traceS: num('BENCH_FAIRNESS_TRACE_S', 300),
    seed: num('BENCH_FAIRNESS_SEED', 41),
    teams: teams.map((t) => ({ ...t, load: t.load * loadScale })),
    teamsSource: teamsFile || 'default',
    loadScale,
    nodes: num('BENCH_NODES', 200),
    halfLifeHours,
    settleS: num('BENCH_FAIRNESS_SETTLE_S', Math.round(2 * halfLifeHours * 3600)),
    windowS: num('BENCH_FAIRNESS_WINDOW_S', 60),
    stepS: num('BENCH_FAIRNESS_STEP_S', 10),
    backlogShare: num('BENCH_FAIRNESS_BACKLOG_SHARE', 0.9),
    shareTolerance: num('BENCH_FAIRNESS_SHARE_TOLERANCE', 0.1),
    utilisationFloor: num('BENCH_FAIRNESS_UTILISATION_FLOOR', 0.9),
    waitGraceS: num('BENCH_FAIRNESS_WAIT_GRACE_S', 2),
    heartbeatMs: num('BENCH_HEARTBEAT_MS', 5000),
    pgbenchS: num('BENCH_PGBENCH_S', 10),
    maxInFlight: num('BENCH_FAIRNESS_MAX_IN_FLIGHT', 32),
    portOffset,
    basePort: num('BENCH_BASE_PORT', 19400 + portOffset),
    kafkaPort: num('BENCH_KAFKA_PORT', 39492 + portOffset),
    databaseUrl: env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/gantry_bench_fairness',
    redisUrl: env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379/9',
    logLevel: env.BENCH_LOG_LEVEL || 'warn',
  };
  if (!(c.halfLifeHours > 0)) throw new Error('BENCH_FAIRNESS_HALF_LIFE_HOURS must be above 0');
  if (!(c.traceS > 0)) throw new Error('BENCH_FAIRNESS_TRACE_S must be above 0');
  if (!(c.windowS > 0 && c.stepS > 0)) throw new Error('BENCH_FAIRNESS_WINDOW_S and BENCH_FAIRNESS_STEP_S must be above 0');
  if (c.settleS + c.windowS > c.traceS)
    throw new Error(
      `BENCH_FAIRNESS_SETTLE_S (${c.settleS}) + BENCH_FAIRNESS_WINDOW_S (${c.windowS}) must fit in BENCH_FAIRNESS_TRACE_S (${c.traceS}): no window would be measured`,
    );
  if (!(c.backlogShare > 0 && c.backlogShare <= 1)) throw new Error('BENCH_FAIRNESS_BACKLOG_SHARE is a share, above 0 and at most 1');
  if (!(c.loadScale > 0)) throw new Error('BENCH_FAIRNESS_LOAD_SCALE must be above 0');
  if (!Number.isInteger(c.nodes) || c.nodes < 10) throw new Error('BENCH_NODES: at least 10 nodes (gangs take up to 8)');
  return c;
}

/**
 * Where a service's CPU went: reads a V8 .cpuprofile and prints self time by
 * package (node_modules/<pkg>, node: internals, the repo's own apps/libs, GC, idle) and the hottest
 * functions. Usage: node dist/bench/api/cpuprofile-summary.js <file.cpuprofile> [top=25] [from] [to]
 * With from/to (wall clock, ISO or HH:MM:SS[.mmm] of the profile's UTC day), only the samples in
 * that window count, and a timeline shows how busy the thread was in each 100 ms and under which
 * of the repo's functions (what held a service's event loop during a stall).
 *
 * To profile every service during the bench (see cpu-profiler.ts):
 *   BENCH_PROFILE_DIR=$PWD/.cache/bench/prof npm run bench:api
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
  /** Date.now() when the profiler started (cpu-profiler.ts); absent in other tools' profiles. */
  wallStartMs?: number;
}

/** When each sample was taken, wall clock in µs (the profile's deltas summed from `wallStartMs`). */
function sampleWallUs(profile: Profile): number[] {
  if (profile.wallStartMs === undefined) throw new Error('this profile has no wallStartMs (not written by cpu-profiler.ts): cannot cut a window');
  let t = profile.wallStartMs * 1000;
  return profile.timeDeltas.map((d) => (t += d));
}

/** The call tree's nodes by id, and each node's parent. */
function treeOf(profile: Profile): { byId: Map<number, ProfileNode>; parent: Map<number, number> } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  return { byId, parent };
}

/** Keeps the samples taken between `fromMs` and `toMs` (wall clock): their deltas, with the rest set to 0. */
export function windowOf(profile: Profile, fromMs: number, toMs: number): Profile {
  const at = sampleWallUs(profile);
  const timeDeltas = profile.timeDeltas.map((d, i) => (at[i] >= fromMs * 1000 && at[i] < toMs * 1000 ? d : 0));
  return { ...profile, timeDeltas, startTime: 0, endTime: (toMs - fromMs) * 1000 };
}

const SLICE_MS = 100;

/** Busy ms per 100 ms slice of the window, and the repo function deepest on the stack for most of it. */
export function timeline(profile: Profile, fromMs: number, toMs: number): string[] {
  const { byId, parent } = treeOf(profile);
  const at = sampleWallUs(profile);
  const slices = new Map<number, { busyUs: number; by: Map<string, number> }>();
  for (let i = 0; i < profile.samples.length; i++) {
    const ms = at[i] / 1000;
    if (ms < fromMs || ms >= toMs) continue;
    const leaf = byId.get(profile.samples[i])!;
    if (leaf.callFrame.functionName === '(idle)') continue;
    const k = Math.floor((ms - fromMs) / SLICE_MS);
    const slice = slices.get(k) ?? { busyUs: 0, by: new Map<string, number>() };
    slices.set(k, slice);
    slice.busyUs += profile.timeDeltas[i];
    let where = leaf.callFrame.functionName || '(anonymous)';
    for (let cur: number | undefined = leaf.id; cur !== undefined; cur = parent.get(cur)) {
      const f = byId.get(cur)!.callFrame;
      if (/\/dist\/(apps|libs)\//.test(f.url)) {
        where = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/dist\//, '')}:${f.lineNumber + 1}`;
        break;
      }
    }
    slice.by.set(where, (slice.by.get(where) ?? 0) + profile.timeDeltas[i]);
  }
  return [...slices.keys()]
    .sort((a, b) => a - b)
    .map((k) => {
      const s = slices.get(k)!;
      const [top, us] = [...s.by].sort((a, b) => b[1] - a[1])[0];
      const at = new Date(fromMs + k * SLICE_MS).toISOString().slice(11, 23);
      return `  ${at}  busy ${String(Math.round(s.busyUs / 1000)).padStart(3)} ms  mostly (${Math.round(us / 1000)} ms) ${top}`;
    });
}

function bucket(url: string, fn: string): string {
  if (fn === '(garbage collector)') return '(gc)';
  if (fn === '(idle)') return '(idle)';
  if (fn === '(program)') return '(program)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (url.startsWith('node:')) return 'node: internals';
  const m = /\/dist\/((?:apps|libs)\/[^/]+)\//.exec(url);
  if (m) return `gantry ${m[1]}`;
  return url ? 'other' : '(native)';
}

export function summarise(profile: Profile, top = 25): string {
  const { byId, parent } = treeOf(profile);
  const selfUs = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const idle = [...selfUs].filter(([id]) => byId.get(id)?.callFrame.functionName === '(idle)').reduce((a, [, us]) => a + us, 0);
  const busy = total - idle;
  const byPkg = new Map<string, number>();
  const byFn = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const f = byId.get(id)!.callFrame;
    const pkg = bucket(f.url, f.functionName);
    if (pkg === '(idle)') continue;
    byPkg.set(pkg, (byPkg.get(pkg) ?? 0) + us);
    const name = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*node_modules\//, '').replace(/^.*\/dist\//, 'dist/')}:${f.lineNumber + 1}`;
    byFn.set(name, (byFn.get(name) ?? 0) + us);
  }
  // Inclusive: the share of busy time with at least one frame of the package on the stack.
  const inclusive = new Map<string, number>();
  for (const [id, us] of selfUs) {
    if (byId.get(id)!.callFrame.functionName === '(idle)') continue;
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const f = byId.get(cur)!.callFrame;
      seen.add(bucket(f.url, f.functionName));
    }
    for (const k of seen) inclusive.set(k, (inclusive.get(k) ?? 0) + us);
  }
  const pct = (us: number) => `${((us / busy) * 100).toFixed(1).padStart(5)}%`;
  const lines = [
    `profile ${((profile.endTime - profile.startTime) / 1e6).toFixed(1)} s, busy ${(busy / 1e6).toFixed(1)} s, idle ${(idle / 1e6).toFixed(1)} s`,
    '',
    'self time by package (share of busy time):',
    ...[...byPkg]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, us]) => `  ${pct(us)}  ${k}`),
    '',
    'time with the package on the stack (inclusive):',
    ...[...inclusive]
      .filter(([k]) => !k.startsWith('(') && k !== 'other')
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, us]) => `  ${pct(us)}  ${k}`),
    '',
    'hottest functions (self time):',
    ...[...byFn]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, us]) => `  ${pct(us)}  ${k}`),
  ];
  return lines.join('\n');
}

if (require.main === module) {
  const [file, top, from, to] = process.argv.slice(2);
  if (!file) {
    console.error('usage: node dist/bench/api/cpuprofile-summary.js <file.cpuprofile> [top] [from] [to]');
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  if (from && to) {
    const day = new Date(profile.wallStartMs ?? Date.now()).toISOString().slice(0, 10);
    const wall = (s: string) => Date.parse(s.includes('T') ? s : `${day}T${s}Z`);
    const [fromMs, toMs] = [wall(from), wall(to)];
    if (!(fromMs < toMs)) throw new Error(`from/to: need two wall-clock times, from before to (got ${from}, ${to})`);
    console.log(summarise(windowOf(profile, fromMs, toMs), top ? Number(top) : 25));
    console.log(['', `busy per ${SLICE_MS} ms:`, ...timeline(profile, fromMs, toMs)].join('\n'));
  } else {
    console.log(summarise(profile, top ? Number(top) : 25));
  }
}

/**
 * Preloaded into a service with NODE_OPTIONS="--require dist/bench/api/cpu-profiler.js" (Node
 * refuses --cpu-prof in NODE_OPTIONS): samples the CPU from start-up and writes
 * $GANTRY_CPU_PROF_DIR/<pid>.cpuprofile when the process exits. Summarise with
 * dist/bench/api/cpuprofile-summary.js.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

const dir = process.env.GANTRY_CPU_PROF_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: Number(process.env.GANTRY_CPU_PROF_INTERVAL_US ?? 1000) });
  session.post('Profiler.start');
  // V8's times are on a monotonic clock; the wall clock at the start lets a window of the profile
  // be lined up with logs and the benches' timestamps (cpuprofile-summary.ts --from/--to).
  const wallStartMs = Date.now();
  let written = false;
  // The in-thread inspector answers synchronously, so this also works inside 'exit'.
  const write = () => {
    if (written) return;
    written = true;
    session.post('Profiler.stop', (err, res) => {
      if (err || !res) return;
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `${process.pid}.cpuprofile`), JSON.stringify({ ...res.profile, wallStartMs }));
    });
  };
  process.on('exit', write);
  // Nest's shutdown hooks end the process by re-raising the signal, so 'exit' never fires: write
  // when the signal arrives (the load is over by then) and step aside for the service's own handler.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    const onSignal = () => {
      write();
      process.removeListener(signal, onSignal);
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    };
    process.on(signal, onSignal);
  }
}

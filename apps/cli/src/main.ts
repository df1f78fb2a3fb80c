import { runCli } from './program';

runCli(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`error: ${(e as Error)?.message ?? e}\n`);
    process.exitCode = 1;
  },
);

import { SHIM_NAME, SHIM_SCRIPT, parseShimStatus, shimArgv } from './attempt-shim';

describe('attempt shim', () => {
  it('runs the command under sh with the status file and the cgroups before it', () => {
    expect(shimArgv('/state/j-1.status', ['/cg/cpu/x/cgroup.procs', '/cg/memory/x/cgroup.procs'], ['python', 'train.py', '--lr', '0.1'])).toEqual({
      file: '/bin/sh',
      args: ['-c', SHIM_SCRIPT, SHIM_NAME, '/state/j-1.status', '/cg/cpu/x/cgroup.procs /cg/memory/x/cgroup.procs', 'python', 'train.py', '--lr', '0.1'],
    });
  });

  it('uses only sh builtins around the command (one fork per attempt: the command itself)', () => {
    const words = SHIM_SCRIPT.split(';').map((s) => s.trim().split(/\s+/)[0]);
    expect(words.filter((w) => !['s=$1', 'g=$2', 'x=', 'shift', 'echo', 'for', 'do', 'done', 'trap', 'if', 'then', 'x=$?', 'fi'].includes(w))).toEqual([]);
    expect(SHIM_SCRIPT).toContain('if [ -z "$x" ]; then "$@"'); // `[` is a builtin of dash and bash
  });

  it.each<[string, ReturnType<typeof parseShimStatus>]>([
    ['0\n', { exitCode: 0, signal: null }],
    ['3\n', { exitCode: 3, signal: null }],
    ['127\n', { exitCode: 127, signal: null }],
    ['128\n', { exitCode: 128, signal: null }],
    ['137\n', { exitCode: null, signal: 'SIGKILL' }],
    ['143\n', { exitCode: null, signal: 'SIGTERM' }],
    ['', null],
    ['1', { exitCode: 1, signal: null }],
    ['garbage', null],
  ])('reads the status %j', (text, expected) => {
    expect(parseShimStatus(text)).toEqual(expected);
  });
});

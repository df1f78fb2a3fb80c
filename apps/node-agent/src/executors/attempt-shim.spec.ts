import { SHIM_NAME, SHIM_SCRIPT, parseShimStatus, shimArgv } from './attempt-shim';

describe('attempt shim', () => {
  it('runs the command under sh with the status file and the cgroups before it', () => {
    expect(shimArgv('/state/j-1.status', ['/cg/cpu/x/cgroup.procs', '/cg/memory/x/cgroup.procs'], ['python', 'train.py', '--lr', '0.1'])).toEqual({
      file: '/bin/sh',
      args: [
        '-c',
        SHIM_SCRIPT,
        SHIM_NAME,
        '/state/j-1.status',
        '/cg/cpu/x/cgroup.procs /cg/memory/x/cgroup.procs',
        '',
        '',
        'python',
        'train.py',
        '--lr',
        '0.1',
      ],
    });
  });

  it('gives a sandboxed command its fd 3 file and shields its wrappers from the stop signals', () => {
    expect(shimArgv('/state/j-1.status', [], ['setpriv', '--', 'bwrap'], { fd3File: '/state/j-1.fd3', sandboxed: true }).args.slice(3)).toEqual([
      '/state/j-1.status',
      '',
      '/state/j-1.fd3',
      '1',
      'setpriv',
      '--',
      'bwrap',
    ]);
  });

  it('uses only sh builtins around the command (one fork per attempt: the command itself)', () => {
    const words = SHIM_SCRIPT.split(';').map((s) => s.trim().split(/\s+/)[0]);
    expect(
      words.filter(
        (w) =>
          !['s=$1', 'g=$2', 'e=$3', 'w=$4', 'x=', 'shift', 'echo', 'for', 'do', 'done', 'trap', 'if', 'then', 'else', 'exec', '(trap', 'x=$?', 'fi'].includes(
            w,
          ),
      ),
    ).toEqual([]);
    // `[` is a builtin of dash and bash; the subshell of a sandbox is the command's own fork (it execs).
    expect(SHIM_SCRIPT).toContain('if [ -z "$x" ]; then if [ -n "$w" ]; then (trap "" TERM INT HUP; exec "$@"); else "$@"; fi');
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

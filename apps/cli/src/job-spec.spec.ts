import { buildJobSpec, parseJobFile } from './job-spec';

const files: Record<string, string> = {
  'train.yaml': [
    'name: train-7b',
    'image: registry/pytorch:24.05',
    'command: [python, train.py]',
    'env: {EPOCHS: "3"}',
    'resources: {gpus: 8, gpuModel: H100, cpuCores: 32, memoryMiB: 262144}',
    'nodes: 2',
  ].join('\n'),
  'train.json': JSON.stringify({ name: 'j', image: 'i', command: ['true'], queue: 'research' }),
  'list.yaml': '- a\n- b\n',
  'bad.yaml': 'name: [unclosed',
  'policy.yaml': [
    'command: [train]',
    'retryPolicy: {maxRetries: 1, retryOnExitCodes: [3]}',
    'dependsOn: [{jobId: up-1, condition: finished}]',
    'maxRuntimeSeconds: 60',
  ].join('\n'),
};
const read = (p: string) => files[p];

describe('buildJobSpec', () => {
  it('reads a YAML job file as the body', () => {
    expect(buildJobSpec({ file: 'train.yaml' }, [], read)).toEqual({
      name: 'train-7b',
      image: 'registry/pytorch:24.05',
      command: ['python', 'train.py'],
      env: { EPOCHS: '3' },
      resources: { gpus: 8, gpuModel: 'H100', cpuCores: 32, memoryMiB: 262144 },
      nodes: 2,
    });
  });

  it('reads JSON too', () => expect(buildJobSpec({ file: 'train.json' }, [], read)).toMatchObject({ queue: 'research', command: ['true'] }));

  it('lets flags and the command after -- override the file', () => {
    const spec = buildJobSpec(
      { file: 'train.yaml', gpus: '4', queue: 'q', env: ['A=1', 'B=x=y'], label: ['team=nlp'], maxRetries: '2' },
      ['sh', '-c', 'exit 0'],
      read,
    );
    expect(spec).toMatchObject({
      queue: 'q',
      command: ['sh', '-c', 'exit 0'],
      env: { EPOCHS: '3', A: '1', B: 'x=y' },
      labels: { team: 'nlp' },
      maxRetries: 2,
      resources: { gpus: 4, gpuModel: 'H100', cpuCores: 32, memoryMiB: 262144 },
    });
  });

  it.each<[string, Parameters<typeof buildJobSpec>[0], object]>([
    [
      'retry flags make a retryPolicy',
      { retries: '3', retryOnExitCodes: '1, 137', backoff: '5', maxBackoff: '60' },
      { retryPolicy: { maxRetries: 3, retryOnExitCodes: [1, 137], backoffSeconds: 5, maxBackoffSeconds: 60 } },
    ],
    [
      '--depends-on: condition succeeded unless named',
      { dependsOn: ['a-1', 'b-2:finished', 'c-3:succeeded'] },
      {
        dependsOn: [
          { jobId: 'a-1', condition: 'succeeded' },
          { jobId: 'b-2', condition: 'finished' },
          { jobId: 'c-3', condition: 'succeeded' },
        ],
      },
    ],
    ['--max-runtime', { maxRuntime: '3600' }, { maxRuntimeSeconds: 3600 }],
    [
      'the policy and dependencies of the file and dependencies as written',
      { file: 'policy.yaml' },
      { retryPolicy: { maxRetries: 1, retryOnExitCodes: [3] }, dependsOn: [{ jobId: 'up-1', condition: 'finished' }], maxRuntimeSeconds: 60 },
    ],
    [
      'flags add to the policy and dependencies of the file',
      { file: 'policy.yaml', backoff: '30', dependsOn: ['up-2'], maxRuntime: '120' },
      {
        retryPolicy: { maxRetries: 1, retryOnExitCodes: [3], backoffSeconds: 30 },
        dependsOn: [
          { jobId: 'up-1', condition: 'finished' },
          { jobId: 'up-2', condition: 'succeeded' },
        ],
        maxRuntimeSeconds: 120,
      },
    ],
  ])('%s', (_what, flags, expected) => {
    expect(buildJobSpec(flags, flags.file ? [] : ['true'], read)).toMatchObject(expected);
  });

  it('builds a job from flags alone, with a name from the command and the default resources', () => {
    expect(buildJobSpec({ gpus: '1' }, ['/usr/bin/python3', 'x.py'])).toEqual({
      name: 'python3',
      image: 'none',
      command: ['/usr/bin/python3', 'x.py'],
      resources: { gpus: 1, cpuCores: 1, memoryMiB: 1024 },
    });
  });

  it.each<[string, Parameters<typeof buildJobSpec>[0], string[], RegExp]>([
    ['no command', {}, [], /no command/],
    ['a number flag that is not one', { gpus: 'eight' }, ['true'], /--gpus must be a whole number/],
    ['an env without =', { env: ['NOPE'] }, ['true'], /--env takes KEY=VALUE/],
    ['a dependency with an unknown condition', { dependsOn: ['a-1:afterok'] }, ['true'], /--depends-on takes <job-id>\[:succeeded\|finished\]/],
    ['exit codes that are not numbers', { retryOnExitCodes: '1,two' }, ['true'], /--retry-on-exit-codes takes whole numbers/],
    ['a runtime that is not a number', { maxRuntime: '1h' }, ['true'], /--max-runtime must be a whole number/],
  ])('%s is a usage error', (_what, flags, command, message) => {
    expect(() => buildJobSpec(flags, command, read)).toThrow(expect.objectContaining({ name: 'UsageError', message: expect.stringMatching(message) }));
  });

  it.each([
    ['list.yaml', /must hold one job/],
    ['bad.yaml', /not valid YAML or JSON/],
  ])('%s is an error', (file, message) => {
    expect(() => buildJobSpec({ file }, [], read)).toThrow(expect.objectContaining({ name: 'CliError', message: expect.stringMatching(message) }));
  });

  it('refuses alias bombs', () => {
    const bomb = [
      'a: &a [x, x, x, x, x, x, x, x, x, x]',
      ...Array.from(
        { length: 12 },
        (_, i) =>
          `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10)
            .fill(`*${String.fromCharCode(97 + i)}`)
            .join(', ')}]`,
      ),
    ].join('\n');
    expect(() => parseJobFile(bomb, 'bomb.yaml')).toThrow(/not valid YAML/);
  });
});

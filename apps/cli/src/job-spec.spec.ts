import { buildJobSpec, parseJobFile } from './job-spec';

const files: Record<string, string> = {
  'train.yaml': ['name: train-7b', 'image: registry/pytorch:24.05', 'command: [python, train.py]', 'env: {EPOCHS: "3"}', 'resources: {gpus: 8, gpuModel: H100, cpuCores: 32, memoryMiB: 262144}', 'nodes: 2'].join('\n'),
  'train.json': JSON.stringify({ name: 'j', image: 'i', command: ['true'], queue: 'research' }),
  'list.yaml': '- a\n- b\n',
  'bad.yaml': 'name: [unclosed',
};
const read = (p: string) => files[p];

describe('buildJobSpec', () => {
  it('reads a YAML job file as the body', () => {
    expect(buildJobSpec({ file: 'train.yaml' }, [], read)).toEqual({
      name: 'train-7b', image: 'registry/pytorch:24.05', command: ['python', 'train.py'], env: { EPOCHS: '3' },
      resources: { gpus: 8, gpuModel: 'H100', cpuCores: 32, memoryMiB: 262144 }, nodes: 2,
    });
  });

  it('reads JSON too', () => expect(buildJobSpec({ file: 'train.json' }, [], read)).toMatchObject({ queue: 'research', command: ['true'] }));

  it('lets flags and the command after -- override the file', () => {
    const spec = buildJobSpec({ file: 'train.yaml', gpus: '4', queue: 'q', env: ['A=1', 'B=x=y'], label: ['team=nlp'], maxRetries: '2' }, ['sh', '-c', 'exit 0'], read);
    expect(spec).toMatchObject({
      queue: 'q', command: ['sh', '-c', 'exit 0'], env: { EPOCHS: '3', A: '1', B: 'x=y' }, labels: { team: 'nlp' }, maxRetries: 2,
      resources: { gpus: 4, gpuModel: 'H100', cpuCores: 32, memoryMiB: 262144 },
    });
  });

  it('builds a job from flags alone, with a name from the command and the default resources', () => {
    expect(buildJobSpec({ gpus: '1' }, ['/usr/bin/python3', 'x.py'])).toEqual({
      name: 'python3', image: 'none', command: ['/usr/bin/python3', 'x.py'], resources: { gpus: 1, cpuCores: 1, memoryMiB: 1024 },
    });
  });

  it.each<[string, Parameters<typeof buildJobSpec>[0], string[], RegExp]>([
    ['no command', {}, [], /no command/],
    ['a number flag that is not one', { gpus: 'eight' }, ['true'], /--gpus must be a whole number/],
    ['an env without =', { env: ['NOPE'] }, ['true'], /--env takes KEY=VALUE/],
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
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]', ...Array.from({ length: 12 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10).fill(`*${String.fromCharCode(97 + i)}`).join(', ')}]`)].join('\n');
    expect(() => parseJobFile(bomb, 'bomb.yaml')).toThrow(/not valid YAML/);
  });
});

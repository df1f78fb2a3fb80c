import { cell, describeConstraint, describeDefault, parseConfigClasses, renderConfigDoc } from './config-doc';

const SOURCE = `
import { hostname } from 'node:os';
/** Base settings. */
export class BaseEnv {
  /** Port to listen on. */
  @IsInt() @Min(1) PORT: number = 8080;
}
export class AgentEnv extends BaseEnv {
  /**
   * Identity of this agent;
   * defaults to the host name.
   */
  @IsString() AGENT_ID: string = hostname();
  /** A day, ms. */
  @IsInt() DAY_MS: number = 24 * 3600 * 1000;
  @IsOptional() UNDOCUMENTED?: string;
  /** Required token. */
  @IsString() TOKEN!: string;
  get derived(): string { return 'x'; }
}
`;

describe('parseConfigClasses', () => {
  const [base, agent] = parseConfigClasses('env.ts', SOURCE);

  it('reads each class with its base and doc comment', () => {
    expect(base).toMatchObject({ name: 'BaseEnv', extendsName: undefined, doc: 'Base settings.' });
    expect(agent).toMatchObject({ name: 'AgentEnv', extendsName: 'BaseEnv', doc: '' });
  });

  it('reads properties only, with their JSDoc on one line', () => {
    expect(agent.properties.map((p) => p.name)).toEqual(['AGENT_ID', 'DAY_MS', 'UNDOCUMENTED', 'TOKEN']);
    expect(agent.properties[0].doc).toBe('Identity of this agent; defaults to the host name.');
    expect(agent.properties[2].doc).toBe('');
  });

  it('tells initializers that call something from constant ones', () => {
    const [id, day, undocumented, token] = agent.properties;
    expect(id).toMatchObject({ initializer: 'hostname()', initializerCalls: true, optional: false });
    expect(day).toMatchObject({ initializer: '24 * 3600 * 1000', initializerCalls: false });
    expect(undocumented).toMatchObject({ initializer: undefined, optional: true });
    expect(token).toMatchObject({ initializer: undefined, optional: false });
  });
});

describe('describeDefault', () => {
  const [, agent] = parseConfigClasses('env.ts', SOURCE);
  const byName = Object.fromEntries(agent.properties.map((p) => [p.name, p]));

  it('shows the value of a constant initializer, the source of one that depends on the machine', () => {
    expect(describeDefault(byName.DAY_MS, 86_400_000)).toBe('`86400000`');
    expect(describeDefault(byName.AGENT_ID, 'this-host')).toBe('`hostname()`');
  });

  it('says unset for an optional field, required for one without a default', () => {
    expect(describeDefault(byName.UNDOCUMENTED, undefined)).toBe('unset');
    expect(describeDefault(byName.TOKEN, undefined)).toBe('**required**');
  });
});

describe('describeConstraint', () => {
  it.each([
    [{ name: 'isInt', args: [] }, 'integer'],
    [{ name: 'min', args: [100] }, '≥ 100'],
    [{ name: 'max', args: [65535] }, '≤ 65535'],
    [{ name: 'isPositive', args: [] }, '> 0'],
    [{ name: 'minLength', args: [1] }, 'not empty'],
    [{ name: 'minLength', args: [32] }, 'at least 32 characters'],
    [{ name: 'isIn', args: [['strict', 'runtime']] }, 'one of `strict`, `runtime`'],
    [{ name: 'matches', args: [/^rediss?:\/\//, null] }, 'matches `/^rediss?:\\/\\//`'],
    [{ name: 'atLeastVariable', args: ['GANTRY_IDEMPOTENCY_TTL_MS'] }, '≥ `GANTRY_IDEMPOTENCY_TTL_MS`'],
    [{ name: 'isString', args: [] }, ''],
    [{ name: 'isOptional', args: [] }, ''],
    [{ name: 'isUrl', args: [] }, 'isUrl'],
  ])('%o reads %s', (constraint, words) => {
    expect(describeConstraint(constraint)).toBe(words);
  });
});

describe('cell and renderConfigDoc', () => {
  it('keeps a cell on one line, escapes pipes, and angle brackets outside code', () => {
    expect(cell('a | b\nc <id> `<id>`')).toBe('a \\| b c &lt;id&gt; `<id>`');
  });

  it('renders a preface, then a table per section, ending in one newline', () => {
    const doc = renderConfigDoc('# Title\n', [
      { title: 'scheduler', intro: 'What it reads.', rows: [{ name: 'PORT', defaultText: '`8080`', constraints: 'integer', doc: 'Port.' }] },
    ]);
    expect(doc).toBe(
      [
        '# Title',
        '',
        '## scheduler',
        '',
        'What it reads.',
        '',
        '| variable | default | constraints | meaning |',
        '|---|---|---|---|',
        '| `PORT` | `8080` | integer | Port. |',
        '',
      ].join('\n'),
    );
  });
});

import ts from 'typescript';

/** One property of a config class as its source declares it. */
export interface SourceProperty {
  name: string;
  /** The JSDoc text on one line; '' when there is none. */
  doc: string;
  /** The initializer's source text; undefined when there is none. */
  initializer?: string;
  /** Whether the initializer calls something (`hostname()`): its value depends on the machine. */
  initializerCalls: boolean;
  /** Declared with `?`: unset unless the environment gives it. */
  optional: boolean;
}

/** A config class as its source declares it. */
export interface SourceClass {
  name: string;
  /** The class it extends, by name. */
  extendsName?: string;
  doc: string;
  properties: SourceProperty[];
}

/** A class-validator constraint on a property: the validator's name and its arguments. */
export interface Constraint {
  name: string;
  args: unknown[];
}

/** One variable as the generated document shows it. */
export interface VariableRow {
  name: string;
  defaultText: string;
  constraints: string;
  doc: string;
}

export interface DocSection {
  title: string;
  intro: string;
  rows: VariableRow[];
}

function docOf(node: ts.Node): string {
  const parts = ts
    .getJSDocCommentsAndTags(node)
    .filter(ts.isJSDoc)
    .map((d) => ts.getTextOfJSDocComment(d.comment) ?? '');
  return parts.join(' ').replace(/\s+/g, ' ').trim();
}

function callsSomething(node: ts.Node): boolean {
  if (ts.isCallExpression(node) || ts.isNewExpression(node)) return true;
  return ts.forEachChild(node, (child) => (callsSomething(child) ? true : undefined)) ?? false;
}

/** The classes a source file declares, with their properties' doc comments and initializers. */
export function parseConfigClasses(fileName: string, text: string): SourceClass[] {
  const file = ts.createSourceFile(fileName, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
  const classes: SourceClass[] = [];
  for (const statement of file.statements) {
    if (!ts.isClassDeclaration(statement) || !statement.name) continue;
    const heritage = statement.heritageClauses?.find((h) => h.token === ts.SyntaxKind.ExtendsKeyword);
    const properties: SourceProperty[] = [];
    for (const member of statement.members) {
      if (!ts.isPropertyDeclaration(member) || !ts.isIdentifier(member.name)) continue;
      if (member.modifiers?.some((m) => m.kind === ts.SyntaxKind.StaticKeyword || m.kind === ts.SyntaxKind.PrivateKeyword)) continue;
      properties.push({
        name: member.name.text,
        doc: docOf(member),
        initializer: member.initializer?.getText(file),
        initializerCalls: member.initializer ? callsSomething(member.initializer) : false,
        optional: member.questionToken !== undefined,
      });
    }
    classes.push({
      name: statement.name.text,
      extendsName: heritage?.types[0]?.expression.getText(file),
      doc: docOf(statement),
      properties,
    });
  }
  return classes;
}

function code(text: string): string {
  return `\`${text}\``;
}

function shownValue(value: unknown): string {
  if (value instanceof RegExp) return code(String(value));
  if (typeof value === 'string') return code(value);
  return code(JSON.stringify(value));
}

/** A class-validator constraint in words, or '' for one that says nothing a reader needs. */
export function describeConstraint(c: Constraint): string {
  const [a] = c.args;
  switch (c.name) {
    case 'isInt':
      return 'integer';
    case 'isNumber':
      return 'number';
    case 'isPositive':
      return '> 0';
    case 'isString':
    case 'isOptional':
    case 'conditional':
      return '';
    case 'min':
      return `≥ ${a}`;
    case 'max':
      return `≤ ${a}`;
    case 'minLength':
      return a === 1 ? 'not empty' : `at least ${a} characters`;
    case 'maxLength':
      return `at most ${a} characters`;
    case 'isIn':
      return `one of ${(a as unknown[]).map(shownValue).join(', ')}`;
    case 'matches':
      return `matches ${shownValue(a)}`;
    case 'atLeastVariable':
      return `≥ ${code(String(a))}`;
    default:
      return `${c.name}${c.args.length ? ` ${c.args.map(shownValue).join(', ')}` : ''}`;
  }
}

/**
 * The default as a reader should see it: the value the class gives the field, or, where the
 * initializer calls something (the host name, the temp directory), its source, so that the
 * document is the same on every machine.
 */
export function describeDefault(prop: SourceProperty, value: unknown): string {
  if (prop.initializer === undefined) return prop.optional ? 'unset' : '**required**';
  if (prop.initializerCalls) return code(prop.initializer);
  return shownValue(value);
}

/**
 * A table cell: one line, pipes escaped, and outside code spans `<` and `>` as entities, so that
 * `gantry-fleet-<id>` is not read as an HTML tag.
 */
export function cell(text: string): string {
  const oneLine = text.replace(/\r?\n/g, ' ').replace(/\|/g, '\\|');
  return oneLine
    .split('`')
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/</g, '&lt;').replace(/>/g, '&gt;')))
    .join('`');
}

export function renderRow(row: VariableRow): string {
  return `| ${code(row.name)} | ${cell(row.defaultText)} | ${cell(row.constraints)} | ${cell(row.doc)} |`;
}

/** The whole document: a preface, then one table per section. */
export function renderConfigDoc(preface: string, sections: DocSection[]): string {
  const out = [preface.trim(), ''];
  for (const s of sections) {
    out.push(`## ${s.title}`, '', s.intro.trim(), '');
    out.push('| variable | default | constraints | meaning |', '|---|---|---|---|');
    out.push(...s.rows.map(renderRow), '');
  }
  return `${out.join('\n').trimEnd()}\n`;
}

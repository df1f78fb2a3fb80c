import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/*
 * The architecture overview lists every metric the code registers: a metric added without a line
 * there fails here (docs that match the code).
 */
const ROOT = join(__dirname, '..', '..', '..', '..');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : sources(path);
    return /\.ts$/.test(name) && !/\.(spec|int-spec|e2e-spec)\.ts$/.test(name) ? [path] : [];
  });
}

it('docs/architecture/overview.md names every metric that apps and libs register', () => {
  const registered = [
    ...new Set(
      ['apps', 'libs']
        .flatMap((d) => sources(join(ROOT, d)))
        .flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/new (?:Counter|Gauge|Histogram)\(\{\s*name: '([a-z_]+)'/g)].map((m) => m[1])),
    ),
  ];
  const overview = readFileSync(join(ROOT, 'docs', 'architecture', 'overview.md'), 'utf8');
  expect(registered.length).toBeGreaterThan(20);
  expect(registered.filter((name) => !overview.includes(`\`${name}`))).toEqual([]);
});

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/*
 * The docs hold together: docs/index.md links every Markdown file the repository tracks, and
 * every relative link in them points at a file that exists. A doc added, moved or deleted without
 * its links fails here.
 */
const ROOT = join(__dirname, '..', '..');
const markdown = execFileSync('git', ['ls-files', '*.md'], { cwd: ROOT, encoding: 'utf8' })
  .split('\n')
  .filter((f) => f && !f.includes('node_modules/'));

/** Relative link targets in a Markdown text, without their #anchor; external and in-page links left out. */
export function relativeLinks(text: string): string[] {
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1].split('#')[0]).filter((t) => t !== '' && !/^[a-z][a-z0-9+.-]*:/i.test(t));
}

it('finds the relative links of a text, not the external or in-page ones', () => {
  expect(relativeLinks('[a](docs/a.md) [b](../b.md#x) [c](https://x.org/c.md) [d](#top) [e](mailto:x@y)')).toEqual(['docs/a.md', '../b.md']);
});

it('docs/index.md links every tracked Markdown file', () => {
  const index = join(ROOT, 'docs', 'index.md');
  const linked = new Set(relativeLinks(readFileSync(index, 'utf8')).map((t) => relative(ROOT, resolve(dirname(index), t))));
  expect(markdown.length).toBeGreaterThan(50);
  expect(markdown.filter((f) => f !== 'docs/index.md' && !linked.has(f))).toEqual([]);
});

it('every relative link in the Markdown files resolves', () => {
  const broken = markdown.flatMap((f) =>
    relativeLinks(readFileSync(join(ROOT, f), 'utf8'))
      .filter((t) => !existsSync(resolve(ROOT, dirname(f), decodeURIComponent(t))))
      .map((t) => `${f}: ${t}`),
  );
  expect(broken).toEqual([]);
});

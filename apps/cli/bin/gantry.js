#!/usr/bin/env node
// `npx gantry` (npm ci links this file as node_modules/.bin/gantry). The CLI is TypeScript, built
// with the rest of the repository by swc into dist/; a fresh clone has no dist yet, and a pulled
// one may have a stale one, so this builds first when the CLI's or the client's sources are newer.
'use strict';
const { spawnSync } = require('node:child_process');
const { existsSync, readdirSync, statSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..', '..', '..');
const main = join(root, 'dist', 'apps', 'cli', 'src', 'main.js');

function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(path));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

const sources = ['apps/cli/src', 'libs/client/src'].map((d) => join(root, d));
if (!existsSync(main) || Math.max(...sources.map(newestMtime)) > statSync(main).mtimeMs) {
  const swc = join(root, 'node_modules', '.bin', 'swc');
  const built = spawnSync(swc, ['apps', 'libs', '-d', 'dist', '-q'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  if (built.status !== 0) {
    process.stderr.write('gantry: building the CLI failed (is `npm ci` done?)\n');
    process.exit(1);
  }
}
require(main);

import 'reflect-metadata';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildDocumentOffline } from './document-app';
import { checkGenerated, describeDrift, serializeDocument } from './document-drift';

/**
 * `npm run openapi:write` rewrites docs/openapi.json from the code; `npm run openapi:check` (a step
 * of npm test) fails with a diff when the checked-in document differs from what the code generates;
 * `--against <url>` compares a running gateway's /openapi.json instead (the e2e check).
 */
async function main(): Promise<void> {
  const file = join(process.cwd(), 'docs', 'openapi.json');
  const against = process.argv.indexOf('--against');
  if (against > 0) {
    // The e2e drift check: the document a running gateway serves, against the checked-in one.
    const url = process.argv[against + 1];
    const served = serializeDocument(await (await fetch(url)).json());
    const drift = describeDrift(readFileSync(file, 'utf8'), served, ['docs/openapi.json (checked in)', url]);
    if (drift) {
      console.error(`${url} differs from docs/openapi.json; run \`npm run openapi:write\` and commit what it writes.\n${drift}`);
      process.exit(1);
    }
    console.log(`${url} matches docs/openapi.json`);
    return;
  }
  const generated = serializeDocument(await buildDocumentOffline());
  if (process.argv.includes('--check')) {
    if (!checkGenerated('docs/openapi.json', generated, 'the code', 'npm run openapi:write')) process.exit(1);
    return;
  }
  writeFileSync(file, generated);
  console.log(`wrote ${file}`);
}

main().catch((e) => {
  console.error(`openapi: ${(e as Error).stack ?? e}`);
  process.exit(1);
});

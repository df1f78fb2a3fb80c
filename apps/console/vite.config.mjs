// The operator console's build (ADR 0018): plain TypeScript and lit, bundled by Vite into
// dist/apps/console, which the gateway serves at /ui/. `npm run build` runs it after swc.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  root: here,
  base: '/ui/',
  resolve: { alias: { '@gantry/client': resolve(here, '../../libs/client/src/index.ts') } },
  build: {
    outDir: resolve(here, '../../dist/apps/console'),
    emptyOutDir: true,
    target: 'es2022',
    // One small bundle: no inline scripts or styles (the CSP allows none), no source of the
    // client's Node-only paths.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: true,
    reportCompressedSize: false,
  },
  logLevel: 'warn',
});

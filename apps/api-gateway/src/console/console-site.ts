import fastifyStatic from '@fastify/static';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply } from 'fastify';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where `npm run build` puts the console (Vite, apps/console): dist/apps/console, beside this app's dist/apps/api-gateway. */
export const CONSOLE_BUILD_DIR = join(__dirname, '..', '..', '..', 'console');

/**
 * What the console's pages may load: only this origin's scripts, styles and API (the token goes
 * in an Authorization header, never to another origin), no inline script or style, no framing.
 * The console is written to satisfy it (styles are a file; dynamic values go through the CSSOM).
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const COMMON_HEADERS: Record<string, string> = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

/**
 * Serves the operator console at /ui/ (contract §4.6) from its build output:
 * - /ui/assets/*: Vite's content-hashed files, cached for a year as immutable (a new build has new names);
 * - /ui and every other /ui/* path: index.html (the console routes in the browser), never cached
 *   without revalidation, with the CSP above. A build without the console answers 404 with the fix.
 */
export async function serveConsole(app: NestFastifyApplication, dir: string = CONSOLE_BUILD_DIR): Promise<{ built: boolean }> {
  const fastify = app.getHttpAdapter().getInstance();
  const indexFile = join(dir, 'index.html');
  const index = existsSync(indexFile) ? readFileSync(indexFile) : null;
  const sendIndex = async (_req: unknown, reply: FastifyReply) => {
    if (!index) return reply.code(404).type('text/plain; charset=utf-8').send('The console is not built: run `npm run build` (or `npm start`).\n');
    return reply
      .headers({ ...COMMON_HEADERS, 'content-security-policy': CONSOLE_CSP, 'x-frame-options': 'DENY', 'cache-control': 'no-cache' })
      .type('text/html; charset=utf-8')
      .send(index);
  };
  if (index) {
    await app.register(fastifyStatic, {
      root: join(dir, 'assets'),
      prefix: '/ui/assets/',
      // Swagger's UI registers the plugin too: one reply decorator is enough.
      decorateReply: false,
      index: false,
      cacheControl: false,
      setHeaders: (res) => {
        for (const [k, v] of Object.entries(COMMON_HEADERS)) res.setHeader(k, v);
        res.setHeader('cache-control', 'public, max-age=31536000, immutable');
      },
    });
  }
  fastify.get('/ui', sendIndex);
  fastify.get('/ui/*', sendIndex);
  return { built: index !== null };
}

/**
 * The operator console's static files (issue 14, docs/console.md), served at `/console/` from the
 * Vite build in `dist/console/` (read once at start: a few files, never the request's path on
 * disk, so no traversal is possible). Every answer carries a strict Content-Security-Policy: only
 * this origin's scripts, styles and API, no inline code, no framing.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';

export const CONSOLE_PATH = '/console/';

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};

/** dist/console/, beside dist/src/ (this file is dist/src/console/static.js once built). */
export function defaultConsoleDir(): string {
  return fileURLToPath(new URL('../../console/', import.meta.url));
}

function loadFiles(dir: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  if (!existsSync(dir)) return files;
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const full = join(d, name);
      if (statSync(full).isDirectory()) walk(full);
      else files.set(relative(dir, full).split(sep).join('/'), readFileSync(full));
    }
  };
  walk(dir);
  return files;
}

function secure(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', CONSOLE_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'no-referrer')
    .header('cross-origin-opener-policy', 'same-origin');
}

export function registerConsole(app: FastifyInstance, dir = defaultConsoleDir()): void {
  const files = loadFiles(dir);
  app.get('/console', (_req, reply) => secure(reply).redirect(CONSOLE_PATH, 302));
  app.get('/console/*', (req, reply) => {
    const wanted = (req.params as { '*': string })['*'];
    const path = wanted === '' ? 'index.html' : wanted;
    const body = files.get(path);
    secure(reply);
    if (body === undefined) {
      const built = files.has('index.html');
      return reply
        .code(built ? 404 : 503)
        .type('text/plain; charset=utf-8')
        .send(built ? 'not found\n' : 'the console is not built: run npm run build\n');
    }
    // Hashed asset names never change content; index.html must be re-read to find new ones.
    const cache = path.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache';
    return reply
      .header('cache-control', cache)
      .type(TYPES[extname(path)] ?? 'application/octet-stream')
      .send(body);
  });
}

/**
 * Browser-test support (issue 14, docs/console.md "Tests"): Debian's Chromium driven by
 * playwright-core (no browser download), axe-core injected from npm, screenshots as artifacts.
 * Without /usr/bin/chromium the suite is skipped with one visible line, unless CI=true, where a
 * missing browser is a failure (.ci/run installs it).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { repoRoot } from '../support/paths.js';

export const CHROMIUM = '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Why the browser tests cannot run here (undefined: they can); under CI=true this throws. */
export function skipReason(): string | undefined {
  const missing = !existsSync(CHROMIUM)
    ? `${CHROMIUM} is not installed (apt-get install chromium)`
    : !existsSync(join(repoRoot, 'dist', 'console', 'index.html'))
      ? 'the console is not built (npm run build)'
      : undefined;
  if (missing !== undefined && !['', '0', 'false'].includes(process.env['CI'] ?? '')) {
    throw new Error(`CI=true: the console browser tests must run, but ${missing}`);
  }
  return missing === undefined ? undefined : `SKIPPED console browser tests: ${missing}`;
}

export interface Launched {
  readonly browser: Browser;
  close(): Promise<void>;
}

export async function launch(): Promise<Launched> {
  const { chromium } = await import('playwright-core');
  // playwright-core gives every launch a fresh temporary --user-data-dir of its own (and refuses
  // one in `args`), so no profile leaks from one run into the next.
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 60_000 });
  return { browser, close: () => browser.close() };
}

export const VIEWPORTS = {
  wide: { width: 1280, height: 800 },
  narrow: { width: 390, height: 844 },
} as const;

/** A fresh context (no cookies) whose CSP violations and page errors are collected. */
export async function newPage(
  browser: Browser,
  viewport: { width: number; height: number } = VIEWPORTS.wide,
): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport, timezoneId: 'Europe/Berlin', locale: 'en-GB' });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) problems.push(`CSP: ${m.text()}`);
  });
  return { context, page, problems };
}

/** A fresh page signed in to the console at `baseUrl` with `token` (its navigation shown). */
export async function signedInPage(browser: Browser, baseUrl: string, token: string) {
  const opened = await newPage(browser);
  const { page } = opened;
  await page.goto(`${baseUrl}/console/`);
  await page.getByLabel('Operator or admin token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Pages' }).waitFor();
  return opened;
}

/** Waits (50 ms steps, at most 10 s) until `read` answers `want`; then asserts it. */
export async function eventually<T>(read: () => Promise<T>, want: T, what: string): Promise<void> {
  let got = await read();
  for (let i = 0; i < 200 && JSON.stringify(got) !== JSON.stringify(want); i++) {
    await new Promise((r) => setTimeout(r, 50));
    got = await read();
  }
  assert.deepEqual(got, want, what);
}

/** The creation keys the Occurrences list shows, in order. */
export const keysShown = (page: Page) => page.locator('tbody tr td:nth-child(5)').allInnerTexts();

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  readonly id: string;
  readonly impact: string | null;
  readonly nodes: string[];
}

/**
 * axe-core's violations on the page as it is. The source is evaluated through the DevTools
 * protocol, not a <script> tag, so the page's CSP (which forbids inline scripts) stays as served.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource);
  return page.evaluate<AxeViolation[]>(
    `axe.run(document).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')) })))`,
  );
}

export const ARTIFACTS =
  process.env['BATON_CONSOLE_ARTIFACTS'] ?? join(repoRoot, 'test-artifacts', 'console');

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

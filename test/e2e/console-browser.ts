import { AxeBuilder } from '@axe-core/playwright';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, BrowserContext, Page, chromium } from 'playwright-core';

/**
 * Debian's Chromium (tools/ci/test.sh installs it with apt; Playwright's own browser downloads
 * cannot be fetched here), driven by playwright-core. Playwright gives every launch a fresh
 * temporary profile (its --user-data-dir). Without the background-networking flags Chromium's
 * own connections (updates, sync, QUIC probes) are refused here and fill the log.
 */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.GANTRY_CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export const DESKTOP = { width: 1280, height: 800 };
export const NARROW = { width: 390, height: 844 };

/** A tab of the console that records every console error, page error and CSP violation it meets. */
export interface ConsoleTab {
  context: BrowserContext;
  page: Page;
  errors: string[];
  close(): Promise<void>;
}

export async function openTab(browser: Browser, viewport = DESKTOP): Promise<ConsoleTab> {
  const context = await browser.newContext({ viewport, reducedMotion: 'reduce' });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()} (${m.location().url})`);
  });
  page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
  return { context, page, errors, close: () => context.close() };
}

/** Signs in through the form, as a person would. */
export async function signIn(tab: ConsoleTab, baseUrl: string, token: string): Promise<void> {
  await tab.page.goto(`${baseUrl}/ui/`);
  await tab.page.getByLabel('Token').fill(token);
  await tab.page.getByRole('button', { name: 'Sign in' }).click();
  await tab.page.getByRole('navigation', { name: 'Sections' }).waitFor();
}

/** axe-core's WCAG 2.x A and AA rules: the serious and critical violations, as readable lines. */
export async function seriousA11yViolations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']).analyze();
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help} at ${v.nodes
          .slice(0, 3)
          .map((n) => n.target.join(' '))
          .join('; ')}`,
    );
}

/**
 * Screenshots of each page: into docs/console/ (shown in docs/console.md) when GANTRY_UPDATE_SCREENSHOTS=1,
 * else into .cache/console-screenshots/, so an ordinary test run changes no tracked file.
 */
export function screenshotDir(root: string): string {
  const dir = process.env.GANTRY_UPDATE_SCREENSHOTS === '1' ? join(root, 'docs', 'console') : join(root, '.cache', 'console-screenshots');
  mkdirSync(dir, { recursive: true });
  return dir;
}

/**
 * Why a page scrolls sideways on a phone: empty when the document fits the viewport's width, else
 * the innermost elements sticking out past its right edge (inside a container that scrolls or
 * clips, nothing counts: that container is the one that sticks out, if any).
 */
export async function overflowingElements(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    type El = { tagName: string; id: string; className: unknown; children: ArrayLike<El>; getBoundingClientRect(): { right: number } };
    const g = globalThis as unknown as {
      document: { documentElement: { clientWidth: number; scrollWidth: number }; body: El };
      getComputedStyle(el: El): { overflowX: string };
    };
    const width = g.document.documentElement.clientWidth;
    if (g.document.documentElement.scrollWidth <= width + 1) return [];
    const out: string[] = [];
    const visit = (el: El): boolean => {
      let inner = false;
      if (g.getComputedStyle(el).overflowX === 'visible') for (const c of Array.from(el.children)) inner = visit(c) || inner;
      const sticksOut = el.getBoundingClientRect().right > width + 1;
      if (sticksOut && !inner)
        out.push(
          `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${typeof el.className === 'string' && el.className ? `.${el.className.trim().split(/\s+/).join('.')}` : ''}`,
        );
      return sticksOut || inner;
    };
    visit(g.document.body);
    return out.length ? out.slice(0, 10) : ['(the document is wider than the viewport)'];
  });
}

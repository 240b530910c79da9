/**
 * Debian's Chromium driven by playwright-core (no browser download), with the flags
 * that keep it off the network, and a record of every console error and uncaught page
 * error so tests can assert that a page produced none.
 *
 * @example
 *   const browser = await launchChromium();
 *   const page = await browser.newPage({ baseURL: url, ignoreHTTPSErrors: true });
 *   expect(page.consoleErrors()).toEqual([]);
 */
import { existsSync } from 'node:fs';
import { type Browser, type BrowserContextOptions, chromium, type Page } from 'playwright-core';

export const CHROMIUM = process.env.SLUICE_CHROMIUM ?? '/usr/bin/chromium';

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface WatchedPage extends Page {
  /** Console errors and uncaught exceptions since the last call, which clears them. */
  takeConsoleErrors(): string[];
}

export interface TestBrowser {
  browser: Browser;
  newPage(options: BrowserContextOptions): Promise<WatchedPage>;
  close(): Promise<void>;
}

export async function launchChromium(): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `the web UI tests need Chromium at ${CHROMIUM}: install it with \`sudo apt-get install -y chromium\` ` +
        '(.ci/run does) or point SLUICE_CHROMIUM at a Chromium binary',
    );
  }
  // playwright gives the browser a fresh temporary profile (--user-data-dir) itself.
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS, headless: true });
  return {
    browser,
    async newPage(options) {
      const context = await browser.newContext({ viewport: { width: 1366, height: 768 }, ...options });
      const page = (await context.newPage()) as WatchedPage;
      let errors: string[] = [];
      page.on('console', (msg) => {
        if (msg.type() === 'error') errors.push(`${msg.text()} (${msg.location().url})`);
      });
      page.on('pageerror', (err) => errors.push(`uncaught: ${err.message}`));
      page.takeConsoleErrors = () => {
        const taken = errors;
        errors = [];
        return taken;
      };
      return page;
    },
    close: () => browser.close(),
  };
}

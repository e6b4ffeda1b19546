/**
 * The project's Chromium for console tests and screenshots. `npm test` launches one for the whole run and
 * hands its endpoint to every test file (TEST_BROWSER_WS); a file run alone launches its own.
 */
import puppeteer, { type Browser, type Page } from 'puppeteer';
import { childProcessEnvironment } from '../../src/config.ts';
import { chromiumArgs, resolveChromium } from '../../src/invoices/pdf/chromium.ts';

export async function launchChromium(): Promise<Browser> {
  const { executablePath, env } = await resolveChromium(process.env.PUPPETEER_EXECUTABLE_PATH || undefined);
  return puppeteer.launch({
    executablePath,
    args: chromiumArgs(),
    env: childProcessEnvironment(env),
    headless: true,
    pipe: false,
  });
}

/** The run's shared browser, or one of this file's own; `close` disconnects or closes accordingly. */
export async function testBrowser(): Promise<{ browser: Browser; close(): Promise<void> }> {
  const endpoint = process.env.TEST_BROWSER_WS;
  if (endpoint) {
    const browser = await puppeteer.connect({ browserWSEndpoint: endpoint });
    return { browser, close: () => browser.disconnect() };
  }
  const browser = await launchChromium();
  return { browser, close: () => browser.close() };
}

/** A fresh, isolated page (its own cookies) at a width; dialogs are recorded, never left open. */
export async function newPage(
  browser: Browser,
  width = 1280,
): Promise<{ page: Page; dialogs: string[]; close(): Promise<void> }> {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  await page.setViewport({ width, height: 900 });
  const dialogs: string[] = [];
  page.on('dialog', async (dialog) => {
    dialogs.push(dialog.message());
    await dialog.dismiss();
  });
  return { page, dialogs, close: () => context.close() };
}

/** Signs in through the console's form (C-2) and lands on `next`. */
export async function signIn(
  page: Page,
  baseUrl: string,
  email: string,
  password: string,
  next = '/admin',
): Promise<void> {
  await page.goto(`${baseUrl}/admin/login?next=${encodeURIComponent(next)}`);
  await page.type('input[name=email]', email);
  await page.type('input[name=password]', password);
  await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
}

/** True when the layout scrolls sideways (C-8 at 360 px): the document is wider than the viewport. */
export async function scrollsSideways(page: Page): Promise<boolean> {
  return page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth + 1);
}

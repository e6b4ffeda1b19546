import type { Browser, Page } from 'puppeteer';
import { createLocalUser } from '../../src/auth/service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { newPage, signIn, testBrowser } from '../helpers/browser.ts';

let users = 0;

/** A test app, the run's Chromium and an admin who can sign in to the console. */
export interface ConsoleKit {
  app: TestApp;
  browser: Browser;
  admin: { email: string; password: string };
  /** A signed-in page at `width`, opened at `path`. */
  adminPage(path: string, width?: number): Promise<{ page: Page; dialogs: string[]; close(): Promise<void> }>;
  close(): Promise<void>;
}

export async function createUser(app: TestApp, role: string): Promise<{ email: string; password: string }> {
  users += 1;
  const user = { email: `${role}-${users}-${process.pid}@example.test`, password: `pw-${users}-correct horse battery` };
  await createLocalUser(app.db, { ...user, role });
  return user;
}

export async function startConsoleKit(env: Record<string, string> = {}): Promise<ConsoleKit> {
  const app = await startTestApp(env);
  const { browser, close } = await testBrowser();
  const admin = await createUser(app, 'admin');
  return {
    app,
    browser,
    admin,
    async adminPage(path, width = 1280) {
      const opened = await newPage(browser, width);
      await signIn(opened.page, app.baseUrl, admin.email, admin.password, path);
      return opened;
    },
    async close() {
      await close();
      await app.close();
    },
  };
}

/** The text of every element matching `selector`. */
export const texts = (page: Page, selector: string) =>
  page.$$eval(selector, (els) => els.map((e) => (e.textContent ?? '').trim()));

/** Fills the form posting to `action` (opening its <details>) and submits it; the browser follows the 303. */
export async function submit(page: Page, action: string, values: Record<string, string>): Promise<void> {
  const form = `form[method=post][action="${action}"]`;
  await page.$eval(form, (f) => f.closest('details')?.setAttribute('open', ''));
  for (const [name, value] of Object.entries(values)) {
    await page.$eval(
      `${form} [name="${name}"]`,
      (el, v) => {
        (el as HTMLInputElement).value = v;
      },
      value,
    );
  }
  await Promise.all([page.waitForNavigation(), page.click(`${form} button[type=submit]`)]);
}

/** The value of the input matching `selector`. */
export const inputValue = (page: Page, selector: string) =>
  page.$eval(selector, (el) => (el as HTMLInputElement).value);
/** The cells' texts of each body row of the tables inside `section` ('' for the page). */
export const rowsOf = (page: Page, section: string) =>
  page.$$eval(`${section} tbody tr`, (trs) =>
    trs.map((tr) => Array.from(tr.querySelectorAll('td')).map((td) => (td.textContent ?? '').trim())),
  );

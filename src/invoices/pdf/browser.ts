/**
 * One warm Chromium per process, reused by every render. Launching costs 1-2 s, a new tab ~100 ms,
 * while a render on a warm tab takes ~25 ms: so the browser stays up and its tabs are kept in a small
 * pool (one per concurrent render). A crashed or disconnected browser is relaunched on the next render.
 */
import { rmSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import puppeteer, { type Browser, type Page, type PDFOptions } from 'puppeteer';
import { childProcessEnvironment } from '../../config.ts';
import { isProcessAlive } from '../../os/process-alive.ts';
import { chromiumArgs, resolveChromium } from './chromium.ts';

export interface BrowserManagerOptions {
  /** PUPPETEER_EXECUTABLE_PATH; when unset the Chromium shipped by @sparticuz/chromium. */
  executablePath?: string;
  /** Tabs kept open; renders beyond this wait for a free tab. */
  maxPages: number;
  logger?: Logger;
  /** Milliseconds one render may take before its tab is thrown away. */
  renderTimeoutMs?: number;
  /** Renders a tab serves before it is closed and a fresh one opened (RENDERS_PER_TAB by default). */
  rendersPerTab?: number;
}

/**
 * A renderer process kept on one tab grows with every document it has shown (measured under `npm run load`:
 * ~110 MB more after ~200 renders, still growing), so a tab is retired after this many renders: its renderer
 * memory goes back to the system, for a new tab (~100 ms) once per 50 renders of ~25 ms.
 */
export const RENDERS_PER_TAB = 50;

const PDF_OPTIONS: PDFOptions = { format: 'A4', printBackground: true, preferCSSPageSize: true };

export class BrowserManager {
  #options: BrowserManagerOptions;
  #browser: Promise<Browser> | undefined;
  /** Open tabs of the current browser, and those of them free for a render. */
  #pages = new Set<Page>();
  #idle: Page[] = [];
  /** Renders each open tab has served. */
  #renders = new WeakMap<Page, number>();
  /** Tabs being opened: they count against maxPages before they exist. */
  #opening = 0;
  #waiting: Array<() => void> = [];
  #active = 0;
  #closed = false;
  #launches = 0;

  constructor(options: BrowserManagerOptions) {
    this.#options = options;
  }

  /** How many times a browser was started (1 while it stays healthy). */
  get launches(): number {
    return this.#launches;
  }

  /** Renders running now. */
  get activeRenders(): number {
    return this.#active;
  }

  /** Renders a self-contained HTML document (no scripts, no network) to PDF bytes. */
  async render(html: string): Promise<Buffer> {
    if (this.#closed) throw new Error('browser manager is closed');
    this.#active += 1;
    try {
      const page = await this.#acquire();
      let reusable = false;
      try {
        const timeout = this.#options.renderTimeoutMs ?? 30_000;
        await page.setContent(html, { waitUntil: 'load', timeout });
        const pdf = await page.pdf({ ...PDF_OPTIONS, timeout });
        reusable = true;
        return Buffer.from(pdf);
      } finally {
        this.#release(page, reusable);
      }
    } finally {
      this.#active -= 1;
    }
  }

  /** Closes the running browser, if any; the manager stays usable (a later render launches another). */
  async closeBrowser(): Promise<void> {
    const browser = this.#browser;
    this.#forget(browser);
    await browser?.then((b) => b.close()).catch(() => undefined);
  }

  /** Closes the browser for good; later renders fail. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.closeBrowser();
  }

  /** The running browser, launched (again) when there is none or it died. */
  async browser(): Promise<Browser> {
    if (this.#closed) throw new Error('browser manager is closed');
    const current = this.#browser;
    if (current) {
      const browser = await current.catch(() => undefined);
      if (browser?.connected) return browser;
      this.#forget(current);
    }
    this.#browser ??= this.#launch();
    return this.#browser;
  }

  async #launch(): Promise<Browser> {
    const { executablePath, env } = await resolveChromium(this.#options.executablePath);
    this.#launches += 1;
    await removeProfilesOfDeadProcesses();
    const userDataDir = await mkdtemp(path.join(tmpdir(), `${PROFILE_PREFIX}${process.pid}-`));
    profileDirs.add(userDataDir);
    let browser: Browser;
    try {
      browser = await puppeteer.launch({
        executablePath,
        userDataDir,
        args: chromiumArgs(),
        headless: 'shell',
        // DevTools over the browser's stdio pipes instead of a WebSocket: when this process dies, even by
        // SIGKILL with no exit handler run, the pipe closes and Chromium shuts itself down; a WebSocket
        // connection would leave the browser and its renderers running as orphans.
        pipe: true,
        env: childProcessEnvironment(env),
        // The process's own shutdown decides when the browser goes (after in-flight renders); puppeteer
        // still kills it when the process exits.
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
        protocolTimeout: 60_000,
      });
    } catch (error) {
      profileDirs.delete(userDataDir);
      await rm(userDataDir, { recursive: true, force: true }).catch(() => undefined);
      throw error;
    }
    // puppeteer drops its own error listeners from the DevTools pipes when it closes the connection; a browser
    // that crashed can still reset them afterwards (ECONNRESET), which would be an uncaught error here.
    for (const stream of browser.process()?.stdio.slice(3) ?? []) stream?.on('error', () => undefined);
    const launched = this.#browser;
    browser.once('disconnected', () => {
      // Out of the set only once gone: a process exiting meanwhile removes it synchronously instead.
      void rm(userDataDir, { recursive: true, force: true, maxRetries: 3 }).then(
        () => profileDirs.delete(userDataDir),
        () => undefined,
      );
      if (this.#browser !== launched || this.#closed) return;
      this.#options.logger?.warn('chromium disconnected; it is relaunched on the next render');
      this.#forget(launched);
    });
    this.#options.logger?.info({ executablePath, version: await browser.version() }, 'chromium started');
    return browser;
  }

  /** Drops `browser` (when it is still the current one) with its tabs; waiters retry on a new one. */
  #forget(browser: Promise<Browser> | undefined): void {
    if (this.#browser !== browser) return;
    this.#browser = undefined;
    this.#pages = new Set();
    this.#idle = [];
    void browser?.then((b) => b.close()).catch(() => undefined);
    this.#wakeAll();
  }

  #wakeAll(): void {
    for (const wake of this.#waiting.splice(0)) wake();
  }

  async #acquire(): Promise<Page> {
    for (;;) {
      const browser = await this.browser();
      const idle = this.#idle.pop();
      if (idle) return idle;
      if (this.#pages.size + this.#opening < this.#options.maxPages) {
        this.#opening += 1;
        let page: Page;
        try {
          page = await browser.newPage();
        } catch (error) {
          this.#opening -= 1;
          this.#waiting.shift()?.();
          throw error;
        }
        const current = await this.#browser?.catch(() => undefined);
        // Counted as open from here on, in the same step, so no waiter sees a free slot in between.
        this.#opening -= 1;
        if (current !== browser) {
          // The browser was replaced while the tab opened: the tab is not ours to keep.
          void page.close().catch(() => undefined);
          this.#waiting.shift()?.();
          continue;
        }
        this.#pages.add(page);
        try {
          await this.#harden(page);
        } catch (error) {
          this.#release(page, false);
          throw error;
        }
        return page;
      }
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
      if (this.#closed) throw new Error('browser manager is closed');
    }
  }

  async #harden(page: Page): Promise<void> {
    // The invoice HTML is escaped and self-contained; scripts and requests are refused all the same.
    await page.setJavaScriptEnabled(false);
    await page.setRequestInterception(true);
    page.on('request', (request) => {
      const url = request.url();
      if (url.startsWith('data:') || url === 'about:blank') void request.continue().catch(() => undefined);
      else void request.abort('blockedbyclient').catch(() => undefined);
    });
  }

  #release(page: Page, reusable: boolean): void {
    const ours = this.#pages.has(page);
    const renders = (this.#renders.get(page) ?? 0) + 1;
    this.#renders.set(page, renders);
    const worn = renders >= (this.#options.rendersPerTab ?? RENDERS_PER_TAB);
    if (ours && reusable && !worn && !page.isClosed()) {
      this.#idle.push(page);
    } else {
      // A tab that failed may be wedged, one of a dead browser is useless, and a worn one has grown: the next
      // render opens a new one.
      this.#pages.delete(page);
      void page.close().catch(() => undefined);
    }
    this.#waiting.shift()?.();
  }
}

/** Profile folders are named after the host and process, so a later process can tell which are orphaned. */
const PROFILE_PREFIX = `billing-pdf-chromium-${hostname().replace(/[^A-Za-z0-9.-]/g, '_')}-`;

/**
 * A process killed with SIGKILL runs no exit handler, so its browser's profile folder stays in the temp folder;
 * the next launch on the same host removes those of processes that no longer exist.
 */
async function removeProfilesOfDeadProcesses(): Promise<void> {
  const entries = await readdir(tmpdir()).catch(() => [] as string[]);
  for (const entry of entries) {
    if (!entry.startsWith(PROFILE_PREFIX)) continue;
    const pid = Number(entry.slice(PROFILE_PREFIX.length).split('-')[0]);
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && !isProcessAlive(pid)) {
      await rm(path.join(tmpdir(), entry), { recursive: true, force: true }).catch(() => undefined);
    }
  }
}

/**
 * Profile folders of running browsers. A process that exits while its browser still runs (puppeteer kills
 * the browser at exit) removes them here, synchronously, as nothing asynchronous runs at exit.
 */
const profileDirs = new Set<string>();
process.once('exit', () => {
  for (const dir of profileDirs) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});

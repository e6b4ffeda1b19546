/**
 * The process's one browser, for the pdf jobs. puppeteer (with the packaged Chromium's loader) is imported
 * only when the first render asks for it: the web process and the other workers import the job definitions
 * (to enqueue renders, to shut down) and would otherwise carry ~45 MB of modules they never use.
 */
import type { BrowserManager, BrowserManagerOptions } from './browser.ts';

let shared: Promise<BrowserManager> | undefined;

/** The process's browser manager, created on first use; the process's shutdown closes it (closeSharedBrowser). */
export function sharedBrowser(options: BrowserManagerOptions): Promise<BrowserManager> {
  shared ??= import('./browser.ts').then(({ BrowserManager }) => new BrowserManager(options));
  return shared;
}

/** Closes the process's browser, if one was started (tests and explicit shutdown hooks). */
export async function closeSharedBrowser(): Promise<void> {
  const manager = shared;
  shared = undefined;
  await (await manager?.catch(() => undefined))?.close();
}

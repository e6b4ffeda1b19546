/**
 * Where Chromium comes from and how it is started: PUPPETEER_EXECUTABLE_PATH when set, else the
 * headless-shell build shipped inside @sparticuz/chromium (extracted once into the temp folder).
 */
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import chromium from '@sparticuz/chromium';
import { childProcessEnvironment } from '../../config.ts';

/**
 * Flags for a headless renderer running as root in a sandbox without network. @sparticuz/chromium's own
 * list is made for AWS Lambda: we keep its headless/no-sandbox flags and leave out what we do not want:
 * `--single-process` (a renderer crash would take the whole browser down, and one process cannot use two
 * cores), the GPU emulation (nothing here draws WebGL) and `--disable-web-security` /
 * `--allow-running-insecure-content` (an invoice page has no reason to reach anything).
 */
const DROPPED = new Set([
  '--single-process',
  '--disable-web-security',
  '--allow-running-insecure-content',
  '--use-gl=angle',
  '--use-angle=swiftshader',
  '--enable-unsafe-swiftshader',
  '--ignore-gpu-blocklist',
  '--in-process-gpu',
]);

const EXTRA = [
  '--no-sandbox',
  '--disable-setuid-sandbox',
  '--no-zygote',
  '--disable-gpu',
  '--disable-dev-shm-usage', // containers often give /dev/shm 64 MB; renderers then crash on big pages
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-default-apps',
  '--disable-extensions',
  '--disable-sync',
  '--disable-breakpad',
  '--metrics-recording-only',
  '--mute-audio',
  '--no-first-run',
  '--hide-scrollbars',
  '--proxy-server=direct://',
  '--proxy-bypass-list=*',
];

export function chromiumArgs(): string[] {
  chromium.setGraphicsMode = false;
  const args = chromium.args.filter((a) => !DROPPED.has(a) && !a.startsWith('--headless'));
  return [...new Set([...args, ...EXTRA])];
}

export interface ChromiumLaunch {
  executablePath: string;
  /** Extra environment for the browser process. */
  env: Record<string, string>;
}

const LOCK_STALE_MS = 120_000;

/**
 * Runs `work` while holding a lock directory, so that two processes starting at once (a worker and a
 * bench, two test files) do not both extract Chromium into the same files: @sparticuz/chromium checks
 * only that the file exists, so the second one would launch a half-written binary.
 */
async function withFileLock<T>(lockDir: string, work: () => Promise<T>): Promise<T> {
  for (const deadline = Date.now() + LOCK_STALE_MS + 10_000; ; ) {
    try {
      await mkdir(lockDir);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const age = await stat(lockDir).then(
        (s) => Date.now() - s.mtimeMs,
        () => 0,
      );
      // A process killed while extracting leaves its lock behind.
      if (age > LOCK_STALE_MS) await rm(lockDir, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${lockDir}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  try {
    return await work();
  } finally {
    await rm(lockDir, { recursive: true, force: true });
  }
}

/**
 * A fontconfig file that keeps the machine's fonts and adds the Open Sans that @sparticuz/chromium ships,
 * so invoices render with real glyphs (and extractable text) even on a machine without any fonts.
 */
async function fontconfigFile(): Promise<string> {
  const file = path.join(tmpdir(), 'billing-pdf-fonts.conf');
  const xml = `<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig>
  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>
  <dir>${path.join(tmpdir(), 'fonts')}</dir>
  <cachedir>${path.join(tmpdir(), 'fonts-cache')}</cachedir>
</fontconfig>
`;
  await writeFile(file, xml);
  return file;
}

/** The browser to launch: the configured executable, or the packaged one (extracted on first use). */
export async function resolveChromium(configuredPath: string | undefined): Promise<ChromiumLaunch> {
  if (configuredPath) return { executablePath: configuredPath, env: {} };
  chromium.setGraphicsMode = false;
  const executablePath = await withFileLock(path.join(tmpdir(), 'billing-chromium-extract.lock'), () =>
    chromium.executablePath(),
  );
  const env: Record<string, string> = {};
  const inherited = childProcessEnvironment();
  if (!inherited.FONTCONFIG_FILE && !inherited.FONTCONFIG_PATH) env.FONTCONFIG_FILE = await fontconfigFile();
  return { executablePath, env };
}

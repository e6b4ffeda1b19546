/**
 * Issue 33, item 6: the PDF renderer's Chromium starts with the environment it needs (PATH, HOME, locale and font
 * variables), not the service's: no database URL, no encryption key, no provider secret.
 */
import { readFileSync } from 'node:fs';
import test from 'ava';
import { BrowserManager } from '../../src/invoices/pdf/browser.ts';

const planted = {
  DATABASE_URL: 'postgres://billing:db-password-that-must-not-leak@db.internal/billing',
  ENCRYPTION_KEY: 'encryption-key-that-must-not-leak-0123456789',
  PROVIDER_A_SECRET_KEY: 'sk_live_provider_secret_that_must_not_leak',
  CRON_SECRET: 'cron-secret-that-must-not-leak',
  LC_ALL: 'C.UTF-8',
};

test('the renderer Chromium does not inherit the service secrets', async (t) => {
  t.timeout(120_000);
  const saved = Object.fromEntries(Object.keys(planted).map((k) => [k, process.env[k]]));
  Object.assign(process.env, planted);
  const manager = new BrowserManager({ maxPages: 1 });
  t.teardown(async () => {
    await manager.close();
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
  const pid = (await manager.browser()).process()!.pid!;
  const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
  const names = environ.map((entry) => entry.slice(0, entry.indexOf('=')));
  for (const [name, value] of Object.entries(planted).filter(([n]) => n !== 'LC_ALL')) {
    t.false(names.includes(name), `${name} reached Chromium`);
    t.false(
      environ.some((e) => e.includes(value)),
      `${name}'s value reached Chromium`,
    );
  }
  t.true(names.includes('PATH'), 'PATH is passed');
  t.true(environ.includes('LC_ALL=C.UTF-8'), 'locale variables are passed');
  t.true((await manager.render('<p>still renders</p>')).subarray(0, 5).toString() === '%PDF-');
});

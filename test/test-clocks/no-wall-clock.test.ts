/**
 * Issue 39: the lifecycle steps take "now" as a parameter and never read the wall clock, so a test clock's advance
 * runs them at its own moments through the same code as the daily sweep. The step files must hold no argument-less
 * `new Date()` nor `Date.now()`; of files that hold other use cases too, the step functions' own source is checked.
 */
import { readFileSync } from 'node:fs';
import test from 'ava';
import { expireLicenses } from '../../src/licenses/expiry.ts';
import { markOverdueInvoices } from '../../src/invoices/service.ts';

const STEP_FILES = [
  'src/lifecycle/sweep.ts',
  'src/lifecycle/dunning-steps.ts',
  'src/lifecycle/overdue.ts',
  'src/subscriptions/renew-due.ts',
  'src/subscriptions/renew.ts',
  'src/subscriptions/renewal-plan.ts',
  'src/subscriptions/renewal-repo.ts',
  'src/subscriptions/transitions.ts',
  'src/subscriptions/reminders.ts',
  'src/subscriptions/reminders-repo.ts',
  'src/subscriptions/usage-billing.ts',
  'src/dunning/charge.ts',
  'src/dunning/service.ts',
  'src/dunning/repo.ts',
  'src/providers/test-clock-methods.ts',
  'src/test-clocks/advance.ts',
  'src/test-clocks/repo.ts',
];

const WALL_CLOCK = /new Date\(\s*\)|Date\.now\(\s*\)/;

const readsOf = (source: string) =>
  source
    .split('\n')
    .map((line, i) => ({ line: i + 1, text: line.trim() }))
    .filter(({ text }) => WALL_CLOCK.test(text) && !text.startsWith('*') && !text.startsWith('//'));

for (const file of STEP_FILES) {
  test(`${file} reads no wall clock`, (t) => {
    t.deepEqual(readsOf(readFileSync(file, 'utf8')), []);
  });
}

test('the step functions of shared files read no wall clock', (t) => {
  for (const step of [expireLicenses, markOverdueInvoices]) t.deepEqual(readsOf(step.toString()), [], step.name);
});

test('the scan finds a wall-clock read where there is one', (t) => {
  t.is(readsOf('const a = 1;\nconst now = new Date();\nconst t = Date.now();').length, 2);
  t.is(readsOf('const later = new Date(asOf.getTime() + 1);').length, 0);
});

/**
 * `npm run lifecycle [-- --as-of 2026-01-31]`: one lifecycle sweep in this process (for a Heroku-style
 * scheduler), with no worker needed. Prints the summary as JSON on stdout; exits 1 when the sweep failed.
 * When a sweep is already queued this process takes it over; when one is running it waits for it and
 * prints that one's summary. `--as-of` is refused unless LIFECYCLE_ALLOW_AS_OF=true (D-81, issue 33).
 */
import { parseArgs } from 'node:util';
import { boot } from './process/boot.ts';
import { timestampInput } from './http/schemas.ts';
import { runLifecycleInProcess } from './lifecycle/runs.ts';
import { refuseAsOfUnlessAllowed } from './lifecycle/service.ts';

const { values } = parseArgs({ args: process.argv.slice(2), options: { 'as-of': { type: 'string' } }, strict: true });
const { deps, boss, database } = await boot('lifecycle-cli', { release: false, supervise: false });
let code = 1;
try {
  let asOf: Date | null = null;
  if (values['as-of'] !== undefined) {
    refuseAsOfUnlessAllowed(deps.config.LIFECYCLE_ALLOW_AS_OF, '--as-of');
    asOf = timestampInput.parse(values['as-of']);
  }
  const run = await runLifecycleInProcess(deps, asOf);
  if (run?.status === 'succeeded') {
    console.log(JSON.stringify({ jobId: run.id, ...run.summary }, null, 2));
    code = 0;
  } else
    console.error(
      `lifecycle run ${run?.id ?? '?'} ended ${run?.status ?? 'unknown'}${run?.error ? `: ${run.error}` : ''}`,
    );
} catch (error) {
  console.error('lifecycle sweep failed:', error instanceof Error ? error.message : error);
} finally {
  await boss.stop({ graceful: false });
  await database.close();
}
process.exit(code);

/**
 * `npm run demo`: fills the configured database (DATABASE_URL, or the embedded PostgreSQL in .data/postgres,
 * as `npm start` uses) with a year of demo billing, then says where the console is and who signs in.
 * Migrates first and creates the first admin from ADMIN_EMAIL/ADMIN_PASSWORD, as the release step does.
 * A database that already holds the demo is left as it is.
 */
import { boot } from '../process/boot.ts';
import { seedDemo } from './seed.ts';

// The sweeps log a line each at info; the demo prints its own progress.
process.env.LOG_LEVEL ||= 'warn';

const { deps, boss, database, config } = await boot('demo', { release: true, supervise: false });
let code = 1;
try {
  const started = performance.now();
  const result = await seedDemo(deps, { log: (line) => console.log(`  ${line}`) });
  if (result.status === 'already_seeded') {
    console.log('This database already holds the demo data (its first customer exists); nothing was added.');
  } else {
    const s = result.summary;
    console.log(
      `Seeded a year of billing (${s.from.slice(0, 10)} to ${s.to.slice(0, 10)}) in ` +
        `${((performance.now() - started) / 1000).toFixed(1)} s:`,
    );
    console.log(
      `  ${s.customers} customers, ${s.subscriptions} subscriptions (${s.planChanges} plan changes), ${s.sweeps} ` +
        `weekly lifecycle sweeps`,
    );
    console.log(
      `  ${s.invoicesBySweeps} renewal invoices, ${s.oneOffInvoices} one-off invoices, ${s.payments} payments, ` +
        `${s.refunds} refunds`,
    );
    console.log(
      `  ${s.creditNotes} credit notes, ${s.credits} store credits, ${s.invoicesOverdue} invoices went overdue`,
    );
    console.log(
      `  ${s.licenses} licenses with ${s.activations} device activations, ${s.webhookEndpoints} webhook endpoint ` +
        `(its deliveries fail)`,
    );
  }
  console.log('');
  console.log(`Start the service with \`npm start\`, then open the console: http://localhost:${config.PORT}/admin`);
  if (config.ADMIN_EMAIL) console.log(`Sign in as ${config.ADMIN_EMAIL} (ADMIN_PASSWORD).`);
  else
    console.log(
      'No ADMIN_EMAIL is set: create an admin with `npm run user:create -- --email you@example.com --password ' +
        '...` to sign in.',
    );
  code = 0;
} catch (error) {
  console.error('demo failed:', error instanceof Error ? error.message : error);
} finally {
  await boss.stop({ graceful: false });
  await database.close();
}
process.exit(code);

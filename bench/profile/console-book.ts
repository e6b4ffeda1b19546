/**
 * Profiling aid, not a benchmark: a PostgreSQL server holding bench/console.ts's book (100,000 invoices, 10,000
 * customers), left running so the console's statements can be read with EXPLAIN ANALYZE (psql on the printed URL).
 * A second run reuses the folder and its database; Ctrl-C stops the server.
 *
 *   npx tsx bench/profile/console-book.ts [dataDir=/tmp/console-book] [port=55434]
 */
import { existsSync } from 'node:fs';
import { startEmbeddedPostgres } from '../../src/db/embedded.ts';
import { createKnex } from '../../src/db/knex.ts';
import { databaseUrl, prepareTemplate } from '../../test/helpers/template.ts';
import { seedConsoleBook } from '../console-fixtures.ts';
import { seedRows } from '../fixtures.ts';

const dataDir = process.argv[2] ?? '/tmp/console-book';
const port = Number(process.argv[3] ?? 55434);
const fresh = !existsSync(`${dataDir}/PG_VERSION`);
const server = await startEmbeddedPostgres({ dataDir, port });
const url = databaseUrl(server.adminUrl, 'console_book');
if (fresh) {
  await prepareTemplate(server.adminUrl, 'console_book');
  const knex = createKnex(url, 2);
  const rows = await seedRows(knex, { history: false });
  await seedConsoleBook(knex, rows.customerIds.length, rows.planIds);
  await knex.destroy();
}
console.log(`book ready: psql '${url}'`);
const stop = async () => {
  await server.stop();
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
await new Promise(() => {});

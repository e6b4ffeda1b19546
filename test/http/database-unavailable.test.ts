/** Which failures answer 503 unavailable (the database is not reachable) rather than 500. */
import test from 'ava';
import { isDatabaseUnavailable } from '../../src/web/error-middleware.ts';

test("pg's and knex's connection failures are the database being unavailable", (t) => {
  for (const message of [
    'Connection terminated unexpectedly',
    'Connection terminated',
    'Connection ended unexpectedly',
    'Client has encountered a connection error and is not queryable',
    'Client was closed and is not queryable',
    'timeout exceeded when trying to connect',
    'Timeout acquiring a connection. The pool is probably full. Are you missing a .transacting(trx) call?',
    'the database system is shutting down',
  ]) {
    t.true(isDatabaseUnavailable(new Error(message)), message);
  }
  t.true(
    isDatabaseUnavailable(
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
    ),
  );
  t.true(
    isDatabaseUnavailable(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })),
  );
});

test('other failures are not', (t) => {
  t.false(isDatabaseUnavailable(new Error('Cannot read properties of undefined')));
  t.false(
    isDatabaseUnavailable(
      Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' }),
    ),
  );
  t.false(isDatabaseUnavailable(undefined));
});

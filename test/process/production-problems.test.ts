/** What a production start refuses to run without (config.ts productionProblems, checked by process/boot.ts). */
import test from 'ava';
import { loadConfig, productionProblems } from '../../src/config.ts';

const KEY = 'a-production-encryption-key-0123456789';

test('production needs DATABASE_URL and ENCRYPTION_KEY, each named in its own sentence', (t) => {
  const problems = productionProblems(loadConfig({ NODE_ENV: 'production' }));
  t.is(problems.length, 2);
  t.regex(problems[0] ?? '', /^DATABASE_URL must be set in production/);
  t.regex(problems[1] ?? '', /^ENCRYPTION_KEY must be set in production/);
});

test('a production configuration with both has no problem; development and tests need neither', (t) => {
  t.deepEqual(
    productionProblems(
      loadConfig({ NODE_ENV: 'production', DATABASE_URL: 'postgres://db.internal/billing', ENCRYPTION_KEY: KEY }),
    ),
    [],
  );
  t.deepEqual(productionProblems(loadConfig({ NODE_ENV: 'development' })), []);
  t.deepEqual(productionProblems(loadConfig({ NODE_ENV: 'test' })), []);
});

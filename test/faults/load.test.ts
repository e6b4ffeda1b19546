/**
 * The mixed load of `npm run load` (bench/load.ts) for 10 s at 8 connections against the real web process and
 * every real worker: zero errors, and the memory bounds (web < 200 MB; the pdf worker with its Chromium
 * processes < 800 MB, peak of the summed resident sets).
 */
import test from 'ava';
import { formatLoad, loadProblems, MEMORY_BOUNDS_MB, runMixedLoad } from '../../bench/load.ts';
import { databaseOfThisFile } from './processes.ts';

const testDatabase = databaseOfThisFile(test);

test(
  '10 s of the mixed load on web + all workers: ' + 'zero errors, web < 200 MB, pdf worker with Chromium < 800 MB',
  async (t) => {
    t.timeout(150_000);
    const [result] = await runMixedLoad(testDatabase().url, {
      seconds: Number(process.env.FAULTS_LOAD_SECONDS ?? 10),
      connections: [8],
    });
    t.log(`\n${formatLoad(result!)}`);
    t.deepEqual(loadProblems(result!), []);
    t.is(result!.errors, 0);
    t.true(result!.requests > 0);
    for (const kind of ['license verify', 'license validate', 'invoice create', 'payment create', 'read'])
      t.true(result!.kinds[kind]!.count > 0, `${kind} was exercised`);
    t.true(
      result!.memory.web!.treeMb < MEMORY_BOUNDS_MB.web && result!.memory.web!.processMb < MEMORY_BOUNDS_MB.web,
      'web within 200 MB',
    );
    t.true(
      result!.memory['worker-pdf']!.treeMb < MEMORY_BOUNDS_MB['worker-pdf'],
      'pdf worker with Chromium within 800 MB',
    );
    t.true(result!.background.webhookDeliveries > 0, 'the webhooks worker delivered');
    t.deepEqual(result!.died, []);
  },
);

// The release step (Procfile `release`): knex migrations, pg-boss schema and queues, first admin.
import { boot } from './process/boot.ts';
import { runProcess } from './process/run.ts';

await runProcess('release', async (opened) => {
  const { boss, deps } = await boot('release', { release: true, supervise: false }, opened);
  opened.add(() => boss.stop({ graceful: false }));
  await opened.closeAll();
  deps.logger.info('release complete');
});

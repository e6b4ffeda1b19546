// The release step (Procfile `release`): knex migrations, pg-boss schema and queues, first admin.
import { boot } from './process/boot.ts';

const { boss, database, deps } = await boot('release', { release: true, supervise: false });
await boss.stop({ graceful: false });
await database.close();
deps.logger.info('release complete');

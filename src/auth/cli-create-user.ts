/**
 * `npm run user:create -- --email a@b.c --password secret [--role admin]` (D-10).
 * Without flags, ADMIN_EMAIL / ADMIN_PASSWORD are used, so a password need not appear in the
 * process list. Prints the new user's id on stdout; any failure exits non-zero with a message.
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.ts';
import { migrateLatest } from '../db/migrate.ts';
import { openDatabase, type OpenDatabase } from '../db/open.ts';
import { AppError } from '../errors.ts';
import { createLogger } from '../logger.ts';
import { ADMIN_ROLE, createLocalUser } from './service.ts';

const USAGE = 'usage: npm run user:create -- --email <email> --password <password> [--role admin]';

class UsageError extends Error {}

function parseOptions(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      options: { email: { type: 'string' }, password: { type: 'string' }, role: { type: 'string' } },
      strict: true,
    }).values;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function readInput(argv: string[], env: { ADMIN_EMAIL?: string; ADMIN_PASSWORD?: string }) {
  const values = parseOptions(argv);
  const email = values.email ?? env.ADMIN_EMAIL;
  const password = values.password ?? env.ADMIN_PASSWORD;
  if (!email) throw new UsageError('--email (or ADMIN_EMAIL) is required');
  if (!password) throw new UsageError('--password (or ADMIN_PASSWORD) is required');
  return { email, password, role: values.role ?? ADMIN_ROLE };
}

async function main(): Promise<number> {
  // Logs go to stdout with the id; keep them to warnings unless asked for more.
  const config = loadConfig(undefined, { LOG_LEVEL: 'warn' });
  let input: ReturnType<typeof readInput>;
  try {
    input = readInput(process.argv.slice(2), config);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`${error.message}\n${USAGE}`);
    return 2;
  }
  const logger = createLogger(config, 'user:create');
  let database: OpenDatabase | undefined;
  try {
    database = await openDatabase(config, logger);
    await migrateLatest(database.knex);
    const user = await createLocalUser(database.knex, input);
    console.log(user.id);
    return 0;
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    console.error(`user:create: ${error.message}`);
    return 1;
  } finally {
    await database?.close();
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(`user:create failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  },
);

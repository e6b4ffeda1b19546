import { existsSync } from 'node:fs';
import { z } from 'zod';

// .env is a convenience for development; real deployments set the environment directly.
if (existsSync('.env')) process.loadEnvFile('.env');

const boolean = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v === '' ? undefined : v));

const configSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('0.0.0.0'),
  DATABASE_URL: optionalString,
  PGDATA_DIR: z.string().default('.data/postgres'),
  EMBEDDED_PG_PORT: z.coerce.number().int().min(1).max(65535).default(54329),
  DB_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),
  /**
   * Where the connections that must keep a session go (LISTEN, and pg-boss, which listens and runs its own
   * pool): set it to PostgreSQL itself when DATABASE_URL is a transaction-mode pooler (docs/operations.md).
   */
  DATABASE_SESSION_URL: optionalString,
  /**
   * `false` behind a transaction-mode pooler that does not track protocol-level prepared statements (PgBouncer
   * before 1.21, or `max_prepared_statements = 0`): the few prepared statements then run unnamed.
   */
  DB_NAMED_STATEMENTS: boolean.default(true),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** `auto`: readable lines when stdout is a terminal, JSON lines otherwise; `json` or `pretty` to force one. */
  LOG_FORMAT: z.enum(['auto', 'json', 'pretty']).default('auto'),
  ADMIN_EMAIL: optionalString,
  ADMIN_PASSWORD: optionalString,
  CRON_SECRET: optionalString,
  LICENSE_KEY_PREFIX: optionalString,
  /**
   * Encrypts the secrets kept in the database (license signing keys, webhook endpoint secrets, the identity
   * provider's client secret: `crypto/envelope.ts`); new and old comma-separated while it changes. Required in
   * production. Each key at least 32 characters (`openssl rand -base64 32`).
   */
  ENCRYPTION_KEY: optionalString.pipe(
    z
      .string()
      .regex(/^[^,]{32,}(,[^,]{32,})*$/, 'must be keys of at least 32 characters, comma-separated')
      .optional(),
  ),
  /** The older name of ENCRYPTION_KEY (issue 21, license signing keys only): still read, after ENCRYPTION_KEY. */
  LICENSE_SIGNING_SECRET: optionalString,
  AUTH_SESSION_EXPIRY_DAYS: optionalString,
  WEBHOOK_ALLOW_PRIVATE_URLS: boolean.default(false),
  /** Delays in seconds between outbound webhook attempts (D-72), e.g. `5,300,1800`; unset = the default schedule. */
  WEBHOOK_RETRY_SCHEDULE_SECONDS: optionalString.pipe(
    z
      .string()
      .regex(/^\d+(\.\d+)?(,\d+(\.\d+)?)*$/, 'must be a comma list of seconds')
      .optional(),
  ),
  PUPPETEER_EXECUTABLE_PATH: optionalString,
  PROVIDER_A_API_URL: z.url().default('https://api.provider-a.example'),
  PROVIDER_A_SECRET_KEY: optionalString,
  PROVIDER_A_WEBHOOK_SECRET: optionalString,
  PROVIDER_B_API_URL: z.url().default('https://api.provider-b.example'),
  PROVIDER_B_SECRET_KEY: optionalString,
  PROVIDER_B_CALLBACK_TOKEN: optionalString,
  PROVIDER_C_WEBHOOK_SECRET: optionalString,
  LIFECYCLE_SCHEDULE: optionalString,
  /**
   * Lets the lifecycle sweep run as of another time than now (the cron body's `asOf`, `npm run lifecycle --as-of`,
   * the demo): for tests and staging only. Off, whatever NODE_ENV says: users move time with test clocks (issue 33).
   */
  LIFECYCLE_ALLOW_AS_OF: boolean.default(false),
  /** The origin of every link the service gives out (K-1: hosted invoice pages, emails); default localhost:<PORT>. */
  PUBLIC_BASE_URL: optionalString.pipe(z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional()),
  /** Where emails go (M-1): `smtp://user:pass@host:port`, `smtps://` for TLS. Unset: every email is `captured`. */
  SMTP_URL: optionalString.pipe(
    z.url({ protocol: /^smtps?$/, error: 'must be an smtp:// or smtps:// URL' }).optional(),
  ),
  /** The From of every email (M-1), e.g. `Billing <billing@example.com>`. */
  MAIL_FROM: z.string().default('Billing <billing@localhost>'),
  /** Delays in seconds between email attempts (M-2), e.g. `1,1,1`; unset = 10 s, 1 min, 5 min, 30 min, 2 h. */
  EMAIL_RETRY_SCHEDULE_SECONDS: optionalString.pipe(
    z
      .string()
      .regex(/^\d+(\.\d+)?(,\d+(\.\d+)?)*$/, 'must be a comma list of seconds')
      .optional(),
  ),
  /** How long a claimed email is held by the worker that claimed it; one killed mid-send leaves it due after this. */
  EMAIL_LEASE_SECONDS: z.coerce.number().min(1).max(3600).default(120),
  TRUST_PROXY: boolean.default(false),
  /** Proxies in front of the service that append to X-Forwarded-For; only their entries are trusted. */
  PROXY_HOPS: z.coerce.number().int().min(1).max(10).default(1),
});

export type Config = z.infer<typeof configSchema>;

/** K-1: the origin of the links the service gives out, without a trailing slash. */
export function publicBaseUrl(config: Pick<Config, 'PUBLIC_BASE_URL' | 'PORT'>): string {
  return (config.PUBLIC_BASE_URL ?? `http://localhost:${config.PORT}`).replace(/\/+$/, '');
}

/** Every variable the service reads (the README's configuration table lists exactly these). */
export const CONFIG_VARIABLES = Object.keys(configSchema.shape) as (keyof Config)[];

// An empty variable (e.g. copied from .env.example) means "not set".
const setOnly = (env: NodeJS.ProcessEnv) =>
  Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));

/**
 * Parses the environment once; a bad value stops the process with a message naming the variable.
 * `defaults` stand in for variables that are not set, before the schema's own defaults (a command-line
 * tool that logs less than a server unless LOG_LEVEL asks for more).
 */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  defaults: Partial<Record<keyof Config, string>> = {},
): Config {
  const parsed = configSchema.safeParse({ ...setOnly(defaults), ...setOnly(env) });
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`).join('\n');
    throw new Error(`Invalid configuration:\n${problems}`);
  }
  return parsed.data;
}

/**
 * What a child process (Chromium) may inherit of this process's environment: the variables a browser needs to find
 * its libraries, fonts, locale, time zone and a home, which are not our configuration and so are passed through
 * unparsed. Nothing else: the service's environment holds its secrets (database URL, keys, provider secrets).
 */
const CHILD_PROCESS_VARIABLES = new Set([
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'TMPDIR',
  'TEMP',
  'TMP',
  'TZ',
  'LANG',
  'LANGUAGE',
  'FONTCONFIG_FILE',
  'FONTCONFIG_PATH',
  'LD_LIBRARY_PATH',
  'XDG_CONFIG_HOME',
  'XDG_CACHE_HOME',
  'XDG_DATA_HOME',
  'XDG_DATA_DIRS',
  'XDG_RUNTIME_DIR',
]);

/** The environment a child process (Chromium) starts with: the allowed variables of ours, with `extra` on top. */
export function childProcessEnvironment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const passed = Object.entries(process.env).filter(
    ([name, value]) => value !== undefined && (CHILD_PROCESS_VARIABLES.has(name) || name.startsWith('LC_')),
  );
  return { ...Object.fromEntries(passed), ...extra };
}

/**
 * What a production start needs beyond a valid configuration, each a sentence naming the variable; the start
 * refuses to run while any is missing (`process/boot.ts`).
 */
export function productionProblems(config: Config): string[] {
  if (config.NODE_ENV !== 'production') return [];
  const problems: string[] = [];
  // Without it the start would run an embedded PostgreSQL in a local folder: a quick start's database, not one to
  // keep customers' money in.
  if (!config.DATABASE_URL)
    problems.push('DATABASE_URL must be set in production: the embedded PostgreSQL is for development only');
  if (!config.ENCRYPTION_KEY && !config.LICENSE_SIGNING_SECRET)
    problems.push(
      'ENCRYPTION_KEY must be set in production: it encrypts the secrets kept in the database (license signing ' +
        'keys, webhook endpoint secrets, the identity provider client secret); generate one with ' +
        '`openssl rand -base64 32`',
    );
  return problems;
}

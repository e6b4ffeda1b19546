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
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** `auto`: readable lines when stdout is a terminal, JSON lines otherwise; `json` or `pretty` to force one. */
  LOG_FORMAT: z.enum(['auto', 'json', 'pretty']).default('auto'),
  ADMIN_EMAIL: optionalString,
  ADMIN_PASSWORD: optionalString,
  CRON_SECRET: optionalString,
  LICENSE_KEY_PREFIX: optionalString,
  /**
   * Encrypts the license signing keys' private halves at rest (D-100); old and new comma-separated while it changes.
   */
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
  TRUST_PROXY: boolean.default(false),
  /** Proxies in front of the service that append to X-Forwarded-For; only their entries are trusted. */
  PROXY_HOPS: z.coerce.number().int().min(1).max(10).default(1),
});

export type Config = z.infer<typeof configSchema>;

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
 * The environment a child process (Chromium) starts with: everything this process was given, which is
 * not our configuration (PATH, HOME, fontconfig's variables) and so is passed through unparsed, with
 * `extra` on top.
 */
export function childProcessEnvironment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, ...extra };
}

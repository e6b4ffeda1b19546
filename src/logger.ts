import { pino, type DestinationStream, type Logger } from 'pino';
import type { Config } from './config.ts';
import { readableDestination } from './log-format.ts';

// Credential-bearing request headers, wherever a log call puts a request's headers (`headers`, Koa's `header`),
// at the top level or one level down (`{ req: { headers } }`).
const SECRET_HEADERS = [
  'authorization',
  'cookie',
  '["set-cookie"]',
  '["x-cron-secret"]',
  '["provider_a-signature"]',
  '["x-callback-token"]',
  '["x-signature"]',
];
const SECRET_FIELDS = [
  'password',
  'password_hash',
  'passwordHash',
  'token',
  'secret',
  'key',
  'apiKey',
  'client_secret',
  'clientSecret',
  'authorization',
  'cookie',
];

/** Every place a secret is redacted from: a field of those names at the top or one level down, and request headers. */
const REDACTED_PATHS = [
  ...SECRET_FIELDS.flatMap((f) => [f, `*.${f}`]),
  ...SECRET_HEADERS.flatMap((h) => {
    const sep = h.startsWith('[') ? '' : '.';
    return ['headers', 'header', '*.headers', '*.header'].map((at) => `${at}${sep}${h}`);
  }),
];

/** LOG_FORMAT `auto`: readable lines on a terminal, JSON lines otherwise (files, pipes, log collectors). */
function readable(format: Config['LOG_FORMAT'] | undefined): boolean {
  return format === 'pretty' || (format !== 'json' && process.stdout.isTTY === true);
}

/**
 * Structured logs; secrets are redacted wherever they might appear in a logged object. `destination`
 * defaults to stdout, as JSON lines or, on a terminal, readable lines (tests pass one to read what was logged).
 */
export function createLogger(
  config: Pick<Config, 'LOG_LEVEL'> & Partial<Pick<Config, 'LOG_FORMAT'>>,
  name = 'billing',
  destination?: DestinationStream,
): Logger {
  const options = { name, level: config.LOG_LEVEL, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } };
  if (destination) return pino(options, destination);
  return readable(config.LOG_FORMAT) ? pino(options, readableDestination(process.stdout)) : pino(options);
}

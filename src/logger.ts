import { pino, type Logger } from 'pino';
import type { Config } from './config.ts';

/** Structured JSON logs; secrets are redacted wherever they might appear in a logged object. */
export function createLogger(config: Pick<Config, 'LOG_LEVEL'>, name = 'billing'): Logger {
  return pino({
    name,
    level: config.LOG_LEVEL,
    redact: {
      paths: ['password', '*.password', 'token', '*.token', 'secret', '*.secret', 'key', '*.key', 'authorization', '*.authorization', 'cookie', '*.cookie'],
      censor: '[redacted]',
    },
  });
}

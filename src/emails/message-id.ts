import type { Config } from '../config.ts';

/** The domain of MAIL_FROM's address, for Message-IDs. */
export function mailDomain(config: Pick<Config, 'MAIL_FROM'>): string {
  return /@([A-Za-z0-9.-]+)>?\s*$/.exec(config.MAIL_FROM)?.[1] ?? 'localhost';
}

/** The Message-ID header of an email row: fixed when the row is written, so a re-send carries the same one. */
export function messageIdHeader(config: Pick<Config, 'MAIL_FROM'>, messageId: string): string {
  return `<${messageId}@${mailDomain(config)}>`;
}

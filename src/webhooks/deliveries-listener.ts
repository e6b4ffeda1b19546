/**
 * A LISTEN on the channel that a committed fan-out or redelivery notifies (D-70), on a connection of its own,
 * reconnected after it is lost; the dispatcher's idle poll covers what is announced while it is down.
 */
import type { Knex } from 'knex';
import pg from 'pg';
import type { AppDeps } from '../app-deps.ts';
import { DELIVERIES_DUE_CHANNEL } from './repo.ts';

export interface DeliveriesListener {
  stop(): Promise<void>;
}

/** Calls `onDue` at each notification until stopped; waits `reconnectMs` before connecting again. */
export function listenForDueDeliveries(
  deps: Pick<AppDeps, 'db' | 'config' | 'logger'>,
  onDue: () => void,
  reconnectMs: number,
): DeliveriesListener {
  let stopped = false;
  let listener: pg.Client | undefined;
  let timer: NodeJS.Timeout | undefined;

  const listen = async (): Promise<void> => {
    if (stopped) return;
    const client = new pg.Client(connectionSettings(deps.db, deps.config.DATABASE_SESSION_URL));
    let lost = false;
    const retry = (err: unknown) => {
      if (lost) return;
      lost = true;
      if (listener === client) listener = undefined;
      client.end().catch(() => undefined);
      if (stopped) return;
      deps.logger.warn({ err }, 'webhook deliveries listener lost; reconnecting');
      timer = setTimeout(() => void listen(), reconnectMs);
      timer.unref();
    };
    client.on('error', retry);
    client.on('end', () => retry(new Error('connection ended')));
    client.on('notification', onDue);
    try {
      await client.connect();
      await client.query(`listen ${DELIVERIES_DUE_CHANNEL}`);
      if (stopped) await client.end();
      else listener = client;
    } catch (err) {
      retry(err);
    }
  };

  void listen();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      const client = listener;
      listener = undefined;
      await client?.end().catch(() => undefined);
    },
  };
}

/** LISTEN needs a session of its own: DATABASE_SESSION_URL when the pool's URL is a transaction-mode pooler. */
function connectionSettings(db: Knex, sessionUrl: string | undefined): pg.ClientConfig {
  if (sessionUrl) return { connectionString: sessionUrl, application_name: 'billing-webhooks-listen' };
  const connection = (db.client as { config: Knex.Config }).config.connection;
  const settings =
    typeof connection === 'string' ? { connectionString: connection } : { ...(connection as pg.ClientConfig) };
  return { ...settings, application_name: 'billing-webhooks-listen' };
}

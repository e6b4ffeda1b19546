import type { Logger } from 'pino';
import { AppError } from '../errors.ts';

type Closer = () => Promise<void>;

/** What a starting process has opened; closed in the reverse order on shutdown or on a failed start. */
export class Opened {
  #closers: Closer[] = [];
  /** Set once the process has its logger; until then shutdown problems go to stderr. */
  logger?: Logger;

  add(close: Closer): void {
    this.#closers.push(close);
  }

  async closeAll(): Promise<void> {
    for (let close = this.#closers.pop(); close; close = this.#closers.pop()) {
      try {
        await close();
      } catch (err) {
        if (this.logger) this.logger.error({ err }, 'error during shutdown');
        else process.stderr.write(`error during shutdown: ${String(err)}\n`);
      }
    }
  }
}

const PARENT_CHECK_MS = 1000;
/** The longest a process shuts down after an unhandled rejection (the queue's graceful stop takes up to 30 s). */
const UNHANDLED_EXIT_MS = 40_000;

/**
 * Runs a process of the service (D-93): `start` opens what it needs and records each closer in `opened`.
 * - A set-up failure (`setup_failed`: port in use, data folder held, database unreachable) closes what was
 *   opened and ends the process with one line naming the cause and the variable to change; any other start
 *   failure is a bug and keeps its stack.
 * - SIGTERM or SIGINT closes everything in reverse order, then exits; a second signal exits at once.
 * - When the parent that started it exits (npm killed, a supervisor gone), it shuts down too, so
 *   `npm start` never leaves a node process serving, with its PostgreSQL and Chromium, without a parent.
 * - A rejection nobody handled is a bug whose damage is unknown: it is logged and the process shuts down as on
 *   SIGTERM, then exits with code 1 (its supervisor restarts it), rather than Node's abrupt exit mid-write.
 */
export async function runProcess(name: string, start: (opened: Opened) => Promise<void>): Promise<void> {
  const opened = new Opened();
  let closing: Promise<void> | undefined;
  let starting: Promise<void> | undefined;
  const shutdown = (why: string, code = 0) => {
    if (closing) return closing;
    opened.logger?.info({ reason: why }, 'shutting down');
    closing = (async () => {
      // A signal during start-up waits for it, so what it opens is closed too.
      await starting?.catch(() => {});
      await opened.closeAll();
      process.exit(code);
    })();
    return closing;
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (closing) process.exit(1);
      void shutdown(signal);
    });
  }
  process.on('unhandledRejection', (reason) => {
    if (opened.logger) opened.logger.fatal({ err: reason }, 'unhandled rejection; shutting down');
    else process.stderr.write(`${name}: unhandled rejection: ${describeError(reason)}\n`);
    if (closing) process.exit(1);
    // Closing may wait on what the lost promise broke: the exit must not.
    setTimeout(() => process.exit(1), UNHANDLED_EXIT_MS).unref();
    void shutdown('unhandled rejection', 1);
  });
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) void shutdown('parent process exited');
  }, PARENT_CHECK_MS).unref();

  starting = start(opened);
  try {
    await starting;
  } catch (error) {
    starting = undefined;
    await opened.closeAll();
    if (error instanceof AppError && error.code === 'setup_failed') {
      process.stderr.write(`${name}: ${error.message}\n`);
    } else {
      process.stderr.write(`${name}: could not start: ${describeError(error)}\n`);
    }
    process.exit(1);
  }
}

const describeError = (error: unknown) => (error instanceof Error ? (error.stack ?? error.message) : String(error));

import type { Logger } from 'pino';

type Closer = () => Promise<void>;

/**
 * Runs `closers` in order once on SIGTERM or SIGINT, then exits; a second signal exits at once.
 * Returns the same shutdown for callers that end the process themselves.
 */
export function onShutdown(logger: Logger, closers: Closer[]): () => Promise<void> {
  let closing: Promise<void> | undefined;
  const shutdown = () => {
    closing ??= (async () => {
      for (const close of closers) {
        try {
          await close();
        } catch (err) {
          logger.error({ err }, 'error during shutdown');
        }
      }
    })();
    return closing;
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (closing) process.exit(1);
      logger.info({ signal }, 'shutting down');
      void shutdown().then(() => process.exit(0));
    });
  }
  return shutdown;
}

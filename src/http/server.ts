import http from 'node:http';
import type { AppDeps } from '../app-deps.ts';
import { createApp } from '../app.ts';

export interface RunningServer {
  port: number;
  /** Stops accepting connections and waits for in-flight requests. */
  close(): Promise<void>;
}

export async function startHttpServer(deps: AppDeps, port: number, host: string): Promise<RunningServer> {
  const app = createApp(deps);
  const server = http.createServer(app.callback());
  server.keepAliveTimeout = 65_000;
  server.requestTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  deps.logger.info({ port: actualPort }, 'http server listening');
  return {
    port: actualPort,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}

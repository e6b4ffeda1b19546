import http from 'node:http';
import type { AppDeps } from '../app-deps.ts';
import { createApp } from './app.ts';
import { AppError } from '../errors.ts';

export interface RunningServer {
  port: number;
  /** Stops accepting connections and waits for in-flight requests. */
  close(): Promise<void>;
}

/** A listen error as one line naming the variable to change (D-93); anything else as it came. */
function listenFailure(error: NodeJS.ErrnoException, port: number, host: string): Error {
  if (error.code === 'EADDRINUSE')
    return new AppError(
      'setup_failed',
      `Port ${port} on ${host} is already in use by another program: stop it, or set PORT to a free port`,
    );
  if (error.code === 'EACCES')
    return new AppError('setup_failed', `Not allowed to listen on port ${port}: set PORT to a port above 1023`);
  if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND')
    return new AppError(
      'setup_failed',
      `HOST ${host} is not an address of this machine: set HOST (0.0.0.0 listens on every interface)`,
    );
  return error;
}

/**
 * A request Node's HTTP parser refuses (bad header bytes, a header block too large, a timeout) never
 * reaches Koa: it is answered here, in the D-1 JSON shape like every other error (D-95).
 */
function answerClientError(error: NodeJS.ErrnoException, socket: import('node:stream').Duplex): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, reason, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', 'The request headers are too large']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'The request took too long to arrive']
        : [400, 'Bad Request', 'The request is not valid HTTP (malformed request line or header)'];
  const body = JSON.stringify({ error: { code: 'invalid_request', message } });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ` +
      `${Buffer.byteLength(body)}\r\n` +
      `X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`,
  );
}

export async function startHttpServer(deps: AppDeps, port: number, host: string): Promise<RunningServer> {
  const app = createApp(deps);
  const handle = app.callback();
  let draining = false;
  // While it drains (D-93) the load balancer is told to stop sending: /readyz answers 503 at once.
  const server = http.createServer((req, res) => {
    if (draining && req.url?.split('?')[0] === '/readyz') {
      res.writeHead(503, { 'content-type': 'application/json; charset=utf-8', connection: 'close' });
      res.end(JSON.stringify({ error: { code: 'unavailable', message: 'The service is shutting down' } }));
      return;
    }
    void handle(req, res);
  });
  server.on('clientError', answerClientError);
  server.keepAliveTimeout = 65_000;
  server.requestTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) => reject(listenFailure(error, port, host)));
    server.listen(port, host, resolve);
  });
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  deps.logger.info({ port: actualPort }, 'http server listening');
  return {
    port: actualPort,
    close: () =>
      new Promise<void>((resolve) => {
        draining = true;
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}

import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { request, type Json } from '../helpers/http.ts';

/** The text of every page of a PDF, lines joined with newlines (pdfjs-dist, no system tool needed). */
export async function pdfText(pdf: Uint8Array): Promise<string> {
  // pdfjs takes ownership of (detaches) the buffer it is given: hand it a copy.
  const doc = await getDocument({
    data: new Uint8Array(pdf),
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    verbosity: 0,
  }).promise;
  try {
    let text = '';
    for (let n = 1; n <= doc.numPages; n++) {
      const content = await (await doc.getPage(n)).getTextContent();
      for (const item of content.items) if ('str' in item) text += item.str + (item.hasEOL ? '\n' : '');
      text += '\n';
    }
    return text;
  } finally {
    await doc.destroy();
  }
}

export interface BinaryResponse {
  status: number;
  headers: Headers;
  bytes: Buffer;
  /** The body parsed as JSON when it is JSON. */
  json: Json;
}

/** A GET whose answer may be binary (the shared request helper decodes bodies as text). */
export async function getBinary(
  baseUrl: string,
  path: string,
  auth: { cookie?: string; bearer?: string } = {},
): Promise<BinaryResponse> {
  const headers: Record<string, string> = {};
  if (auth.cookie) headers.cookie = auth.cookie;
  if (auth.bearer) headers.authorization = `Bearer ${auth.bearer}`;
  const response = await fetch(`${baseUrl}${path}`, { headers });
  const bytes = Buffer.from(await response.arrayBuffer());
  let json: unknown;
  if ((response.headers.get('content-type') ?? '').includes('json')) json = JSON.parse(bytes.toString('utf8'));
  return { status: response.status, headers: response.headers, bytes, json };
}

export async function createCustomer(baseUrl: string, cookie: string, body: Record<string, unknown> = {}) {
  const res = await request(baseUrl, '/api/customers', {
    cookie,
    body: { name: 'PDF Customer', email: `pdf-${randomUUID()}@example.test`, ...body },
  });
  if (res.status !== 201) throw new Error(`create customer: ${res.status} ${res.text}`);
  return res.body as { id: string; name: string };
}

export async function createInvoice(baseUrl: string, cookie: string, body: Record<string, unknown>) {
  const res = await request(baseUrl, '/api/billing/invoices', { cookie, body });
  if (res.status !== 201) throw new Error(`create invoice: ${res.status} ${res.text}`);
  return res.body as { id: string; invoiceNumber: string; total: string; status: string; pdfUrl: string };
}

export async function createApiKey(baseUrl: string, cookie: string, customerId: string): Promise<string> {
  const res = await request(baseUrl, '/api/api-keys', { cookie, body: { name: 'pdf test', customerId } });
  if (res.status !== 201) throw new Error(`create key: ${res.status} ${res.text}`);
  return res.body.key;
}

export interface WorkerProcess {
  child: ChildProcess;
  output(): string;
  /** SIGTERM, then the exit code (SIGKILL after 20 s). */
  stop(): Promise<number | null>;
}

/** `node --import tsx workers/pdf.ts` on the test database: the pdf worker as production runs it. */
export function spawnPdfWorker(databaseUrl: string, env: Record<string, string> = {}): WorkerProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'workers/pdf.ts'], {
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'info', NODE_ENV: 'test', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    output: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      const code = await exited;
      clearTimeout(killer);
      return code;
    },
  };
}

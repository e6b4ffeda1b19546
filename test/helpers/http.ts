/**
 * A JSON answer's body as a test reads it: whatever the app sent, navigated field by field; the assertions
 * check the fields (and the OpenAPI tests check whole bodies against the document).
 */
// biome-ignore lint/suspicious/noExplicitAny: tests walk arbitrary JSON answers; a type would be a cast per read
export type Json = any;

export interface JsonResponse<T = Json> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  method?: string;
  body?: unknown;
  /** Sent as-is (no JSON encoding). */
  rawBody?: string | Buffer;
  cookie?: string;
  bearer?: string;
  headers?: Record<string, string>;
  /** `manual` to see a redirect (its status, Location and Set-Cookie) instead of following it. */
  redirect?: RequestRedirect;
}

/** One HTTP request to the app over loopback; JSON in and out. */
export async function request<T = Json>(
  baseUrl: string,
  path: string,
  options: RequestOptions = {},
): Promise<JsonResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | Buffer | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  if (options.cookie) headers.cookie = options.cookie;
  if (options.bearer) headers.authorization = `Bearer ${options.bearer}`;
  const response = await fetch(`${baseUrl}${path}`, {
    method: options.method ?? (body === undefined ? 'GET' : 'POST'),
    headers,
    body: Buffer.isBuffer(body) ? new Uint8Array(body) : body,
    redirect: options.redirect ?? 'follow',
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: leave the text
  }
  return { status: response.status, headers: response.headers, body: parsed as T, text };
}

/** The `session=...` pair of a login answer's Set-Cookie, ready for a Cookie header. */
export function sessionCookie(response: JsonResponse): string {
  const setCookie = response.headers.get('set-cookie') ?? '';
  const match = /session=([^;]+)/.exec(setCookie);
  if (!match) throw new Error(`no session cookie in ${setCookie}`);
  return `session=${match[1]}`;
}

/**
 * One HTTP call to a payment provider's API (D-60): a 10 s timeout, redirects never followed, the
 * answer parsed as JSON when it is JSON. Every adapter goes through here, so timeouts and the
 * "did the provider act?" question are answered the same way everywhere.
 */

export const PROVIDER_TIMEOUT_MS = 10_000;

/**
 * A provider call that did not do what was asked. `definite` is true when the provider answered and
 * refused (nothing happened there); false when the outcome is unknown (timeout, connection lost,
 * provider 5xx, an answer we cannot read), so the caller must not assume nothing happened.
 */
export class ProviderCallError extends Error {
  readonly definite: boolean;
  constructor(message: string, options: { definite: boolean }) {
    super(message);
    this.name = 'ProviderCallError';
    this.definite = options.definite;
  }
}

export type ProviderAnswer = Record<string, unknown> & { error?: { message?: unknown; code?: unknown } };

export interface ProviderRequest {
  /** For messages: provider_a, provider_b. */
  provider: string;
  /** What is asked, for messages: "refund", "checkout session", "payment". */
  what: string;
  url: string;
  headers: Record<string, string>;
  body: string | URLSearchParams;
  timeoutMs?: number;
}

function parseAnswer(text: string): ProviderAnswer | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as ProviderAnswer) : undefined;
  } catch {
    return undefined;
  }
}

/** POSTs to the provider and answers its JSON object, or throws ProviderCallError with the provider's own message. */
export async function callProvider(request: ProviderRequest): Promise<{ status: number; answer: ProviderAnswer }> {
  const timeoutMs = request.timeoutMs ?? PROVIDER_TIMEOUT_MS;
  let status: number;
  let text: string;
  try {
    const response = await fetch(request.url, {
      method: 'POST',
      headers: request.headers,
      body: request.body,
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    status = response.status;
    text = await response.text();
  } catch (error) {
    const timedOut = (error as { name?: string }).name === 'TimeoutError';
    throw new ProviderCallError(
      timedOut
        ? `${request.provider} did not answer within ${timeoutMs / 1000} s`
        : `${request.provider} could not be reached`,
      { definite: false },
    );
  }
  const answer = parseAnswer(text);
  if (status < 200 || status >= 300) {
    const said =
      typeof answer?.error?.message === 'string'
        ? answer.error.message
        : typeof answer?.message === 'string'
          ? answer.message
          : `HTTP ${status}`;
    // A 4xx is a refusal; after a 5xx (or a redirect) the provider may or may not have acted, so it is not called one.
    if (status >= 400 && status < 500)
      throw new ProviderCallError(`${request.provider} refused the ${request.what}: ${said}`, { definite: true });
    throw new ProviderCallError(`${request.provider} failed on the ${request.what} (HTTP ${status}): ${said}`, {
      definite: false,
    });
  }
  // An unreadable success answer is an empty one: the adapter then says which field it missed.
  return { status, answer: answer ?? {} };
}

/** A provider's string field, or undefined. */
export function stringField(answer: ProviderAnswer, key: string): string | undefined {
  const value = answer[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

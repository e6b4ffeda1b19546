/**
 * provider_a's refund call (D-60: form-encoded `POST /v1/refunds`). This is the refund half of the
 * provider_a adapter; the providers work (checkout, payment intents, webhooks) brings the rest of the
 * adapter and may move this file beside it, keeping the RefundGateway shape.
 */
import { minorUnits, money } from '../money.ts';
import type { PaymentRow } from '../payments/repo.ts';
import { RefundGatewayError, type ProviderRefundConfig, type RefundGateway } from './gateway.ts';

export const PROVIDER_A_TIMEOUT_MS = 10_000;

/** provider_a takes integer amounts in the currency's minor unit ("12.34" USD is 1234, "1000" JPY is 1000). */
export function toMinorUnits(amount: string, currency: string): string {
  return money(amount).times(money(10).pow(minorUnits(currency))).toFixed(0);
}

interface ProviderAnswer {
  id?: unknown;
  status?: unknown;
  failure_reason?: unknown;
  error?: { message?: unknown; code?: unknown };
}

function parseAnswer(text: string): ProviderAnswer | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === 'object' ? (parsed as ProviderAnswer) : undefined;
  } catch {
    return undefined;
  }
}

export function providerARefundGateway(config: ProviderRefundConfig, options: { timeoutMs?: number } = {}): RefundGateway {
  const timeoutMs = options.timeoutMs ?? PROVIDER_A_TIMEOUT_MS;
  const url = `${config.PROVIDER_A_API_URL.replace(/\/+$/, '')}/v1/refunds`;
  return {
    async refund(payment: PaymentRow, amount: string, idempotencyKey: string) {
      if (!config.PROVIDER_A_SECRET_KEY) {
        throw new RefundGatewayError('provider_a is not configured (PROVIDER_A_SECRET_KEY is not set)', { definite: true });
      }
      if (!payment.provider_reference) {
        throw new RefundGatewayError('The payment has no provider_a payment intent to refund', { definite: true });
      }
      const form = new URLSearchParams({ payment_intent: payment.provider_reference, amount: toMinorUnits(amount, payment.currency) });
      let status: number;
      let text: string;
      try {
        const response = await fetch(url, {
          method: 'POST',
          headers: {
            Authorization: `Bearer ${config.PROVIDER_A_SECRET_KEY}`,
            'Content-Type': 'application/x-www-form-urlencoded',
            'Idempotency-Key': idempotencyKey,
          },
          body: form,
          redirect: 'manual',
          signal: AbortSignal.timeout(timeoutMs),
        });
        status = response.status;
        text = await response.text();
      } catch (error) {
        const timedOut = (error as { name?: string }).name === 'TimeoutError';
        throw new RefundGatewayError(timedOut ? `provider_a did not answer within ${timeoutMs / 1000} s` : 'provider_a could not be reached', { definite: false });
      }
      const answer = parseAnswer(text);
      if (status < 200 || status >= 300) {
        const said = typeof answer?.error?.message === 'string' ? answer.error.message : `HTTP ${status}`;
        // A 4xx is a refusal; after a 5xx the provider may or may not have refunded.
        throw new RefundGatewayError(`provider_a refused the refund: ${said}`, { definite: status >= 400 && status < 500 });
      }
      if (typeof answer?.id !== 'string' || answer.id === '') {
        throw new RefundGatewayError('provider_a answered without a refund id', { definite: false });
      }
      if (answer.status === 'failed' || answer.status === 'canceled') {
        const reason = typeof answer.failure_reason === 'string' ? `: ${answer.failure_reason}` : '';
        throw new RefundGatewayError(`provider_a refund ${answer.id} ${answer.status}${reason}`, { definite: true });
      }
      return { providerRefundId: answer.id };
    },
  };
}

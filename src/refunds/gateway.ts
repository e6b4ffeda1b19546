import type { Config } from '../config.ts';
import type { PaymentRow } from '../payments/repo.ts';

/**
 * The provider seam of refunds (D-55): a payment taken through a provider's API is refunded through
 * that provider before anything is recorded. `idempotencyKey` is the refund's own id, so asking again
 * for the same refund (after a crash, see resumePendingRefunds) never refunds twice.
 */
export interface RefundGateway {
  refund(payment: PaymentRow, amount: string, idempotencyKey: string): Promise<{ providerRefundId: string }>;
}

/**
 * A provider call that did not refund. `definite` is true when the provider answered and refused
 * (nothing was refunded); false when the outcome is unknown (timeout, connection lost, provider 5xx).
 */
export class RefundGatewayError extends Error {
  readonly definite: boolean;
  constructor(message: string, options: { definite: boolean }) {
    super(message);
    this.name = 'RefundGatewayError';
    this.definite = options.definite;
  }
}

export type ProviderRefundConfig = Pick<Config, 'PROVIDER_A_API_URL' | 'PROVIDER_A_SECRET_KEY'>;

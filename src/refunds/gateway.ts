import type { Config } from '../config.ts';
import type { PaymentRow } from '../payments/repo.ts';

/**
 * The provider seam of refunds (D-55): a payment taken through a provider's API is refunded through
 * that provider before anything is recorded. `idempotencyKey` is the same for every ask of one refund
 * (its reservation's id, or a digest of the admin request's own Idempotency-Key), so asking again after an
 * unknown outcome or a crash (createRefund, resumePendingRefunds) never refunds twice.
 */
export interface RefundGateway {
  refund(payment: PaymentRow, amount: string, idempotencyKey: string): Promise<{ providerRefundId: string }>;
}

/** A provider call that did not refund; `definite` says whether the provider surely did nothing. */
export { ProviderCallError as RefundGatewayError } from '../providers/call.ts';

export type ProviderRefundConfig = Pick<Config, 'PROVIDER_A_API_URL' | 'PROVIDER_A_SECRET_KEY'>;

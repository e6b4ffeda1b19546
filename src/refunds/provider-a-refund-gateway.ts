/** The refund seam's provider_a implementation (D-55), over the provider_a adapter. */
import type { PaymentRow } from '../payments/repo.ts';
import { refundProviderA, type ProviderAOptions } from '../providers/provider-a.ts';
import { RefundGatewayError, type ProviderRefundConfig, type RefundGateway } from './gateway.ts';

export function providerARefundGateway(config: ProviderRefundConfig, options: ProviderAOptions = {}): RefundGateway {
  return {
    async refund(payment: PaymentRow, amount: string, idempotencyKey: string) {
      if (!payment.provider_reference) {
        throw new RefundGatewayError('The payment has no provider_a payment intent to refund', { definite: true });
      }
      const { id } = await refundProviderA(
        config,
        { paymentIntentId: payment.provider_reference, amount, currency: payment.currency, idempotencyKey },
        options,
      );
      return { providerRefundId: id };
    },
  };
}

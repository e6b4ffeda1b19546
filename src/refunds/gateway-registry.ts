import type { ProviderRefundConfig, RefundGateway } from './gateway.ts';
import { providerARefundGateway } from './provider-a-refund-gateway.ts';

/**
 * The gateway that refunds payments of `paymentMethod`, or undefined when such payments are refunded
 * outside the service and only recorded here: bank transfers and manual payments (money moved by
 * hand), provider_b (invoice payments: refunded in its dashboard) and provider_c (merchant of record:
 * refunds are issued on its side). Only provider_a refunds through its API (D-60).
 */
export function refundGatewayFor(paymentMethod: string, config: ProviderRefundConfig): RefundGateway | undefined {
  if (paymentMethod === 'provider_a') return providerARefundGateway(config);
  return undefined;
}

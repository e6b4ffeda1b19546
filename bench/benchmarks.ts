/** Every benchmark `npm run bench` runs, in order. A new one is a small `*.bench.ts` file and a line here. */
import { createCustomer } from './create-customer.bench.ts';
import { createInvoice, createInvoiceTwoRates } from './create-invoice.bench.ts';
import { createSubscription } from './create-subscription.bench.ts';
import { getProduct } from './get-product.bench.ts';
import type { Benchmark } from './harness.ts';
import { licenseCheckout } from './license-checkout.bench.ts';
import { licenseHeartbeat } from './license-heartbeat.bench.ts';
import { providerWebhookAck } from './provider-webhook-ack.bench.ts';
import { validateKnownDevice } from './validate-known-device.bench.ts';
import { validateNewDevice } from './validate-new-device.bench.ts';
import { verifyLicense } from './verify-license.bench.ts';

export const benchmarks: Benchmark[] = [
  getProduct,
  createCustomer,
  createInvoice,
  createInvoiceTwoRates,
  createSubscription,
  verifyLicense,
  validateKnownDevice,
  validateNewDevice,
  licenseCheckout,
  licenseHeartbeat,
  providerWebhookAck,
];

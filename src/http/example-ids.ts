/**
 * The ids the OpenAPI examples (D-94) refer to, one per kind of object. They are placeholders: the example
 * test (test/docs/examples.test.ts) creates one object of each kind first and replaces each placeholder,
 * in the path and in the body, with the real id of its kind, so an example request can be sent as written.
 * An example that names another object uses these constants, never an id of its own.
 */
export const EXAMPLE_ID = {
  customer: '5f0c1a2e-8d4b-4c1e-9a7f-2b3c4d5e6f70',
  product: '6a1d2b3f-9e5c-4d2f-8b80-3c4d5e6f7081',
  plan: '7b2e3c40-af6d-4e30-9c91-4d5e6f708192',
  subscription: '8c3f4d51-b07e-4f41-8da2-5e6f708192a3',
  invoice: '9d405e62-c18f-4052-9eb3-6f708192a3b4',
  payment: 'ae516f73-d290-4163-afc4-708192a3b4c5',
  paymentMethod: 'bf627084-e3a1-4274-b0d5-8192a3b4c5d6',
  endpoint: 'c0738195-f4b2-4385-81e6-92a3b4c5d6e7',
  delivery: 'd18492a6-05c3-4496-92f7-a3b4c5d6e7f8',
  providerEvent: 'e295a3b7-16d4-45a7-a308-b4c5d6e7f809',
  otherPlan: '7b2e3c40-af6d-4e30-9c91-4d5e6f7081aa',
  apiKey: 'f3a6b4c8-27e5-46b8-b419-c5d6e7f8091a',
  taxRate: '04b7c5d9-38f6-47c9-8520-d6e7f8091a2b',
  metric: '0a4b5c6d-7e8f-4901-a2b3-c4d5e6f70812',
  charge: '1b5c6d7e-8f90-4a12-b3c4-d5e6f7081923',
  /** A license key (D-30's format), not a UUID. */
  licenseKey: 'LIC-7K3M-Q9XW-2B8P',
  deviceId: 'laptop-7f3a2c',
} as const;

/** The example webhook endpoint; it does not resolve, so the example test puts a loopback URL in its place. */
export const EXAMPLE_WEBHOOK_URL = 'https://hooks.acme.example/billing';

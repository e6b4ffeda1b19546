import { eachKnownDevice, type Benchmark } from './harness.ts';

/**
 * A license file for a device activated in setup (D-101): one statement (license, activation, current kid)
 * and an Ed25519 signature with the key decrypted once per process. Issue 21's aim: at least 0.5 of the
 * one-select ceiling, signing included. The first request creates the signing key (the bench database never
 * ran the release step); the warm-up absorbs it.
 */
export const licenseCheckout: Benchmark = {
  name: 'POST /api/licenses/checkout (activated device)',
  ceiling: 'select',
  aim: 0.5,
  load: (fixtures) => ({
    method: 'POST',
    next: eachKnownDevice(fixtures, '/api/licenses/checkout'),
    accept: (body) => body.includes('"licenseFile":"-----BEGIN LICENSE FILE-----\\n'),
  }),
};

import { rotating, type Benchmark } from './harness.ts';

/**
 * The public key check software runs at start-up (D-33): no credentials, one indexed select by key,
 * over all seeded licenses. Aim (issue 3): at least 0.75 of the one-select ceiling.
 */
export const verifyLicense: Benchmark = {
  name: 'POST /api/licenses/verify',
  ceiling: 'select',
  aim: 0.75,
  load: (fixtures) => {
    const nextKey = rotating(fixtures.knownDevices.map((d) => d.licenseKey));
    return {
      method: 'POST',
      next: () => ({ path: '/api/licenses/verify', body: { licenseKey: nextKey() } }),
      // A 200 that says valid: false (or a 404 body) would measure a refusal, not the check.
      accept: (body) => body.includes('"valid":true'),
    };
  },
};

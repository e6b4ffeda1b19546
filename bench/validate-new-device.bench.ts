import { rotating, type Benchmark } from './harness.ts';

/**
 * Validate that registers a device (D-34): every request a new deviceId from a counter, on licenses
 * without a limit (maxActivations null), spread over the seeded unlimited licenses so it measures the
 * activation (row lock, counter update, insert) rather than queueing on one hot license row.
 * Aim (issue 3): at least 0.6 of the one-write-transaction ceiling.
 */
export const validateNewDevice: Benchmark = {
  name: 'POST /api/licenses/validate (new device)',
  ceiling: 'write',
  aim: 0.6,
  load: (fixtures) => {
    const nextKey = rotating(fixtures.unlimitedLicenseKeys);
    let n = 0;
    return {
      method: 'POST',
      next: () => ({
        path: '/api/licenses/validate',
        body: { licenseKey: nextKey(), deviceId: `bench-new-device-${++n}`, deviceName: `Bench Laptop ${n}` },
      }),
      accept: (body) => body.includes('"valid":true'),
    };
  },
};

import { eachKnownDevice, type Benchmark } from './harness.ts';

/**
 * Validate for a device activated in setup (D-34): the common start-up call, which refreshes the
 * device's lastSeenAt without counting it again. Each request re-validates one of the seeded
 * license+device pairs in turn. Aim (issue 3): at least 0.6 of the one-write-transaction ceiling.
 */
export const validateKnownDevice: Benchmark = {
  name: 'POST /api/licenses/validate (known device)',
  ceiling: 'write',
  aim: 0.6,
  load: (fixtures) => ({
    method: 'POST',
    next: eachKnownDevice(fixtures, '/api/licenses/validate', { deviceName: 'Bench Workstation' }),
    // currentActivations stays 1: a known device that was counted again would show here as 2.
    accept: (body) => body.includes('"valid":true') && body.includes('"currentActivations":1,'),
  }),
};

import { eachKnownDevice, type Benchmark } from './harness.ts';

/**
 * A floating seat's heartbeat (D-102): an activated device checks in, one UPDATE of its activation row
 * (lastSeenAt) joined to its license, over the seeded license+device pairs in turn (their licenses ask
 * for a heartbeat every hour, so every device stays live through the run). Aim (issue 21): at least
 * 0.8 of the one-write-transaction ceiling.
 */
export const licenseHeartbeat: Benchmark = {
  name: 'POST /api/licenses/heartbeat',
  ceiling: 'write',
  aim: 0.8,
  load: (fixtures) => ({
    method: 'POST',
    next: eachKnownDevice(fixtures, '/api/licenses/heartbeat'),
    // A 404 (device_not_activated) or a license not valid would measure a refusal, not the check-in.
    accept: (body) => body.includes('"valid":true') && body.includes('"nextHeartbeatBefore":"'),
  }),
};

/**
 * D-102's dead-device rule as SQL text, apart from the repos that use it (validate, heartbeat, the sweep, checkout).
 */

/**
 * D-102 in SQL, the one place it is written (status.ts `isDeviceDead` is the same rule for pages): the
 * activation `a` of license `l` has been silent for more than twice the license's interval.
 */
export const silentSql = (a: string, l: string) =>
  `(${l}.heartbeat_interval_seconds is not null and ${a}.last_seen_at < now() - ${l}.heartbeat_interval_seconds * ` +
  `interval '2 seconds')`;
/**
 * Dead: silent, or its seat already released to another device. A dead device holds no seat and must validate again.
 */
export const deadSql = (a: string, l: string) => `(${a}.released_at is not null or ${silentSql(a, l)})`;

export type LicenseStatus = 'active' | 'expired' | 'suspended' | 'revoked';

/**
 * The status every read and check sees (D-32): revoked is final; a date in the past reads `expired`
 * at once, before the sweep stores it. A stored `expired` stands, whatever the clock says, until a
 * renewal (PUT of a future date or of a status) stores another: the sweep may have run as of a later
 * time than now (D-81), and it has told integrators with license.expired. Only an `active` license can
 * activate a device (D-34); repo.ts `canActivateSql` is that rule for the statements that decide it.
 */
export function effectiveStatus(
  row: { status: string; expires_at: Date | null; test_clock_id?: string | null },
  now: Date,
): LicenseStatus {
  const status = row.status as LicenseStatus;
  // A clock customer's license is as stored: its clock, not today's date, expires it (TC-2, repo.ts datePassedSql).
  if (status === 'revoked' || status === 'expired' || row.test_clock_id) return status;
  const pastDate = row.expires_at !== null && row.expires_at.getTime() <= now.getTime();
  return pastDate ? 'expired' : status;
}

/** The refusal code validate answers for a status that cannot activate (D-34). */
export function refusalFor(
  status: LicenseStatus,
): 'license_suspended' | 'license_expired' | 'license_revoked' | undefined {
  if (status === 'suspended') return 'license_suspended';
  if (status === 'expired') return 'license_expired';
  if (status === 'revoked') return 'license_revoked';
  return undefined;
}

/**
 * D-102 for pages and answers (repo.ts `deadSql` is the same rule in SQL): a device is dead once its seat
 * was released, or when its license has an interval and it has been silent for more than twice it.
 */
export function isDeviceDead(
  activation: { last_seen_at: Date; released_at: Date | null },
  license: { heartbeat_interval_seconds: number | null },
  now: Date,
): boolean {
  if (activation.released_at !== null) return true;
  const interval = license.heartbeat_interval_seconds;
  return interval !== null && activation.last_seen_at.getTime() < now.getTime() - 2 * interval * 1000;
}

/**
 * When a device seen at `lastSeenAt` should check in next: one interval later. It stays live for a
 * second interval after that, so one lost heartbeat costs no seat. null when heartbeats are off.
 */
export function nextHeartbeatBefore(lastSeenAt: Date, intervalSeconds: number | null): Date | null {
  return intervalSeconds === null ? null : new Date(lastSeenAt.getTime() + intervalSeconds * 1000);
}

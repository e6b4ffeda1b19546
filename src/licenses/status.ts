export type LicenseStatus = 'active' | 'expired' | 'suspended' | 'revoked';

/**
 * The status every read and check sees (D-32): revoked is final; a date in the past reads
 * `expired` at once, before the daily sweep stores it; a stored `expired` whose date was moved
 * into the future reads `active` (a renewal).
 */
export function effectiveStatus(row: { status: string; expires_at: Date | null }, now: Date): LicenseStatus {
  const status = row.status as LicenseStatus;
  if (status === 'revoked') return 'revoked';
  const pastDate = row.expires_at !== null && row.expires_at.getTime() <= now.getTime();
  if (pastDate) return 'expired';
  if (status === 'expired') return 'active';
  return status;
}

/** The refusal code validate answers for a status that cannot activate (D-34). */
export function refusalFor(status: LicenseStatus): 'license_suspended' | 'license_expired' | 'license_revoked' | undefined {
  if (status === 'suspended') return 'license_suspended';
  if (status === 'expired') return 'license_expired';
  if (status === 'revoked') return 'license_revoked';
  return undefined;
}

import type { LicenseRow } from './repo.ts';

/** M-3 `license.issued`, once per license; the template names the product when it composes. */
export function licenseIssuedEmail(row: LicenseRow) {
  const { id, license_key, product_id, expires_at, max_activations } = row;
  return {
    type: 'license.issued' as const,
    customerId: row.customer_id,
    occasion: id,
    data: {
      licenseId: id,
      licenseKey: license_key,
      productId: product_id,
      expiresAt: expires_at?.toISOString() ?? null,
      maxDevices: max_activations,
    },
  };
}

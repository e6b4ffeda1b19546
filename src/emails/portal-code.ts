import type { NewEmail } from './outbox.ts';

/**
 * M-3 `portal.code` for the portal's sign-in (P-2): the code and how long it is valid. `codeId` names the code's
 * row, so each code is emailed once; the portal writes it with `queueEmails` in the transaction that stores the code.
 */
export function portalCodeEmail(customerId: string, codeId: string, code: string, expiresInMinutes: number): NewEmail {
  return { type: 'portal.code', customerId, occasion: codeId, data: { code, expiresInMinutes } };
}

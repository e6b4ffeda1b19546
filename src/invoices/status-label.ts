import type { InvoiceRow } from './repo.ts';

/** An invoice's status as a customer reads it, the same on the PDF, the hosted page and the portal. */
export const INVOICE_STATUS_LABEL: Record<InvoiceRow['status'], string> = {
  draft: 'Draft',
  issued: 'Issued',
  overdue: 'Overdue',
  paid: 'Paid',
  void: 'Void',
};

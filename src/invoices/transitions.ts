import type { InvoiceStatus } from './repo.ts';

/** D-52: the status changes PUT may make; overdue comes only from the lifecycle sweep. */
const ALLOWED: Record<InvoiceStatus, readonly InvoiceStatus[]> = {
  draft: ['issued', 'void'],
  issued: ['paid', 'void'],
  overdue: ['paid', 'void'],
  paid: [],
  void: [],
};

export function canTransition(from: InvoiceStatus, to: InvoiceStatus): boolean {
  return ALLOWED[from].includes(to);
}

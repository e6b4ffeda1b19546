/** An invoice's and its lines' rows as the tables hold them, and the shapes written to them. */
import type { StoredTax } from './stored-tax.ts';

export type InvoiceStatus = 'draft' | 'issued' | 'paid' | 'overdue' | 'void';

export interface InvoiceRow {
  id: string;
  customer_id: string;
  subscription_id: string | null;
  invoice_number: string;
  status: InvoiceStatus;
  currency: string;
  tax_rate: string;
  subtotal: string;
  tax_amount: string;
  total: string;
  amount_paid: string;
  credit_applied: string;
  credited_amount: string;
  due_date: Date | null;
  issued_at: Date | null;
  paid_at: Date | null;
  voided_at: Date | null;
  overdue_at: Date | null;
  period_start: Date | null;
  period_end: Date | null;
  /** T-5: the taxes it was priced with, copied at creation (amounts in the currency's output form). */
  taxes: StoredTax[];
  /** T-3: the customer's exemption when the invoice was created; a reverse charge keeps the tax id it showed. */
  tax_exempt: 'none' | 'exempt' | 'reverse';
  buyer_tax_id: string | null;
  content_version: number;
  created_at: Date;
  updated_at: Date;
}

export interface LineItemRow {
  id: string;
  invoice_id: string;
  position: number;
  description: string;
  quantity: number;
  unit_price: string;
  amount: string;
  /** T-5: the rates this line was priced with. */
  tax_rate_ids: string[];
  /** A usage line's detail (U-11); null for other lines. */
  usage?: unknown;
}

export type InvoiceInsert = Pick<
  InvoiceRow,
  | 'customer_id'
  | 'subscription_id'
  | 'invoice_number'
  | 'status'
  | 'currency'
  | 'tax_rate'
  | 'subtotal'
  | 'tax_amount'
  | 'total'
> &
  Partial<Pick<InvoiceRow, 'due_date' | 'issued_at' | 'period_start' | 'period_end' | 'created_at'>>;

export type InvoiceChanges = Partial<
  Pick<
    InvoiceRow,
    | 'status'
    | 'amount_paid'
    | 'credit_applied'
    | 'credited_amount'
    | 'due_date'
    | 'issued_at'
    | 'paid_at'
    | 'voided_at'
    | 'overdue_at'
  >
>;

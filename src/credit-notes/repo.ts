import type { ReasonCode } from '../money-input.ts';
import type { Knex } from 'knex';
import type { Db } from '../db/knex.ts';
import { paginate, type Page, type PageQuery } from '../db/paginate.ts';
import type { StoredTax } from '../invoices/taxes.ts';

export interface CreditNoteRow {
  id: string;
  number: string;
  invoice_id: string;
  customer_id: string;
  amount: string;
  currency: string;
  reason: string | null;
  /** T-6: its share of the invoice's taxes. */
  taxes: StoredTax[];
  reason_code: ReasonCode | null;
  created_at: Date;
  /** The part that went to the customer's credit balance rather than the invoice. */
  to_balance: string;
}

type StoredCreditNote = Omit<CreditNoteRow, 'to_balance'>;

function selectCreditNotes(db: Db): Knex.QueryBuilder {
  return db('credit_notes').select(
    'credit_notes.*',
    db.raw(
      `coalesce((select sum(l.amount) from credit_ledger l
                  where l.credit_note_id = credit_notes.id and l.kind = 'credit_note'), 0)::text as to_balance`,
    ),
  );
}

export async function insertCreditNoteRow(db: Db, row: Omit<StoredCreditNote, 'id'>): Promise<StoredCreditNote> {
  // A JS array would be sent as a PostgreSQL array: the jsonb column takes its JSON text.
  const [created] = await db('credit_notes')
    .insert({ ...row, taxes: JSON.stringify(row.taxes) })
    .returning('*');
  return created as StoredCreditNote;
}

export async function findCreditNoteRow(db: Db, id: string): Promise<CreditNoteRow | undefined> {
  return selectCreditNotes(db).where('credit_notes.id', id).first();
}

/** What credit notes already took off an invoice, including parts that went to the credit balance. */
export async function creditNoteTotal(db: Db, invoiceId: string): Promise<string> {
  const row = await db('credit_notes')
    .where({ invoice_id: invoiceId })
    .sum<{ total: string | null }>('amount as total')
    .first();
  return row?.total ?? '0';
}

export function listCreditNoteRows(
  db: Db,
  page: PageQuery,
  filters: { invoiceId?: string; customerId?: string },
): Promise<Page<CreditNoteRow>> {
  const query = selectCreditNotes(db);
  if (filters.invoiceId) query.where('credit_notes.invoice_id', filters.invoiceId);
  if (filters.customerId) query.where('credit_notes.customer_id', filters.customerId);
  return paginate<CreditNoteRow>(query, 'credit_notes', page);
}

/** `/admin/invoices/export.csv` (console.md "money", C-17): the list with its filters, every row. */
import { listInvoiceSummaries } from '../../invoices/service.ts';
import { formatMoney } from '../../money.ts';
import { amountDue } from '../../pricing/amount-due.ts';
import { csvDay } from '../http/csv.ts';
import { defineExport } from '../http/route.ts';
import { namesInBatch } from './export-names.ts';
import { everyBatch } from './invoices-filters.tsx';
import { invoicesQuery, serviceFilters } from './invoices-query.ts';
import { pickCustomer } from './list-helpers.tsx';

const INVOICE_CSV_HEADER = [
  'id',
  'number',
  'customerId',
  'customerName',
  'status',
  'currency',
  'subtotal',
  'taxRate',
  'taxAmount',
  'total',
  'amountPaid',
  'creditApplied',
  'creditedAmount',
  'amountDue',
  'dueDate',
  'issuedAt (UTC)',
  'paidAt (UTC)',
  'voidedAt (UTC)',
  'createdAt (UTC)',
] as const;

export const invoicesExport = defineExport({
  path: '/admin/invoices/export.csv',
  filename: 'invoices.csv',
  query: invoicesQuery,
  header: INVOICE_CSV_HEADER,
  async *rows({ deps, query }) {
    // A customer picked by name exports that customer's rows; a name matching none or several exports none.
    const pick = await pickCustomer(deps.db, query);
    if (pick.kind !== 'id') return;
    const filters = serviceFilters({ ...query, customerId: pick.customerId });
    for await (const batch of everyBatch((page) => listInvoiceSummaries(deps.db, page, filters))) {
      const { customerName } = await namesInBatch(deps.db, batch);
      for (const i of batch) {
        const m = (v: string) => formatMoney(v, i.currency);
        yield [
          i.id,
          i.invoice_number,
          i.customer_id,
          customerName(i),
          i.status,
          i.currency,
          m(i.subtotal),
          i.tax_rate,
          m(i.tax_amount),
          m(i.total),
          m(i.amount_paid),
          m(i.credit_applied),
          m(i.credited_amount),
          formatMoney(amountDue(i), i.currency),
          csvDay(i.due_date),
          i.issued_at,
          i.paid_at,
          i.voided_at,
          i.created_at,
        ];
      }
    }
  },
});

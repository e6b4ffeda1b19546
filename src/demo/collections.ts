/**
 * How the demo's customers pay: every issued invoice, as it appears, gets its payment scheduled on the
 * timeline by the habit of its customer (prompt, slow, late past the due date, in two parts, or not at all
 * once they lapse). Payments dated after the demo's end have not happened: those invoices stay open, and the
 * sweep marks the ones past their due date overdue.
 */
import { SYSTEM_ACTOR } from '../actor.ts';
import type { Db } from '../db/knex.ts';
import { amountDue } from '../pricing/amount-due.ts';
import type { InvoiceRow } from '../invoices/repo.ts';
import { getInvoice, listInvoices } from '../invoices/service.ts';
import { formatMoney } from '../money.ts';
import type { PaymentMethod } from '../payments/repo.ts';
import { createPaymentBody } from '../payments/schema.ts';
import { receivePayment } from '../settlement/service.ts';
import { seededRandom } from './random.ts';
import { addDays, type Timeline } from './timeline.ts';

export type PayerHabit = 'prompt' | 'slow' | 'late' | 'partial' | 'lapsed';

export interface Payer {
  habit: PayerHabit;
  method: PaymentMethod;
  /** For `lapsed`: invoices issued from this date on are never paid. */
  lapsesAt?: Date;
}

const PREFIX: Partial<Record<PaymentMethod, string>> = { provider_b: 'pb_in_', provider_c: 'pc_ord_' };

export class Collections {
  private readonly known = new Set<string>();
  private references = 0;
  payments = 0;

  constructor(
    private readonly db: Db,
    private readonly timeline: Timeline,
    private readonly payers: Map<string, Payer>,
    /** Each customer's place in the demo's list: ids are random, places are not. */
    private readonly customerIndex: Map<string, number>,
    private readonly seed: number,
    /** The demo's first day: draws depend on dates relative to it, so a later run tells the same story. */
    private readonly origin: Date,
  ) {}

  /** Schedules the payments of issued invoices not seen before. */
  async discover(): Promise<void> {
    let startingAfter: string | undefined;
    for (;;) {
      const page = await listInvoices(this.db, { limit: 500, startingAfter }, { status: 'issued' });
      for (const { invoice } of page.rows) {
        if (this.known.has(invoice.id)) continue;
        this.known.add(invoice.id);
        this.plan(invoice);
      }
      if (!page.hasMore) return;
      startingAfter = page.rows.at(-1)!.id;
    }
  }

  private plan(invoice: InvoiceRow): void {
    const payer = this.payers.get(invoice.customer_id) ?? { habit: 'prompt', method: 'bank_transfer' };
    const issued = invoice.issued_at ?? invoice.created_at;
    // Drawn from the invoice itself, not from one shared sequence: a sweep's invoices are listed in id
    // order, which is random, and the book must come out the same on every run.
    const since = (date: Date | null) => (date ? date.getTime() - this.origin.getTime() : '');
    const random = seededRandom(
      hash(
        `${this.seed}|${this.customerIndex.get(invoice.customer_id)}|${since(issued)}|` +
          `${invoice.total}|${since(invoice.period_start)}`,
      ),
    );
    const pay = (days: number, share: 'all' | 'half') =>
      this.timeline.add(addDays(issued, days), `payment of ${invoice.invoice_number}`, (at) =>
        this.pay(invoice.id, payer.method, share, at),
      );
    switch (payer.habit) {
      case 'prompt':
        pay(random.int(1, 9) + random.next(), 'all');
        break;
      case 'slow':
        pay(random.int(9, 13) + random.next(), 'all');
        break;
      case 'late':
        // Past the 14-day terms: a sweep in between marks the invoice overdue first.
        pay(random.int(19, 38) + random.next(), 'all');
        break;
      case 'partial':
        pay(random.int(2, 6) + random.next(), 'half');
        pay(random.int(16, 26) + random.next(), 'all');
        break;
      case 'lapsed':
        if (payer.lapsesAt && issued >= payer.lapsesAt) return;
        pay(random.int(3, 12) + random.next(), 'all');
        break;
    }
  }

  private async pay(invoiceId: string, method: PaymentMethod, share: 'all' | 'half', at: Date): Promise<void> {
    const { invoice } = await getInvoice(this.db, invoiceId);
    const due = amountDue(invoice);
    // Credit notes, store credit or an earlier part may have settled it meanwhile.
    if (due.lte(0)) return;
    const prefix = PREFIX[method];
    const body = createPaymentBody.parse({
      invoiceId,
      amount: formatMoney(share === 'half' ? due.div(2) : due, invoice.currency),
      paymentMethod: method,
      providerReference: prefix ? `${prefix}${String(++this.references).padStart(8, '0')}` : null,
    });
    await receivePayment(this.db, body, SYSTEM_ACTOR, { now: at });
    this.payments += 1;
  }
}

/** FNV-1a, 32 bits: a stable number from a text. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

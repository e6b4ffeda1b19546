/**
 * The actions of an invoice's page (console.md "money", C-6): each turns its form into the API's JSON body,
 * parses it with the API route's schema and calls the same service, then redirects to the invoice's page.
 */
import { createCreditNoteBody } from '../../credit-notes/schema.ts';
import { parseOrThrow } from '../../http/validate.ts';
import { updateInvoiceBody } from '../../invoices/schema.ts';
import { formatMoney, money } from '../../money.ts';
import { createPaymentBody } from '../../payments/schema.ts';
import { findLikeRecentPayment, getPayment } from '../../payments/service.ts';
import { storedAmount } from '../../money-input.ts';
import { label } from '../components/labels.ts';
import type { z } from 'zod';
import { createRefundBody } from '../../refunds/schema.ts';
import { createRefund } from '../../refunds/service.ts';
import { issueCreditNote, receivePayment, setInvoiceStatus } from '../../settlement/service.ts';
import type { Db } from '../../db/knex.ts';
import { findInvoice } from '../../invoices/service.ts';
import { amountDue } from '../../pricing/amount-due.ts';
import { field, type FormValues } from '../http/form.ts';
import { askFirst, defineAction } from '../http/route.ts';
import { invoicePage, paymentRefundPage } from './invoices-detail.tsx';
import { uuidParam } from '../http/params.ts';
import { FORMS } from './invoices-forms.tsx';

const invoiceUrl = (id: string) => `/admin/invoices/${id}`;

/** The fields of money going back (a refund, a credit note): amount, reason and its code (C-14). */
const moneyBack = (form: FormValues) => ({
  amount: field(form, 'amount')?.trim(),
  reason: field(form, 'reason'),
  reasonCode: field(form, 'reasonCode'),
});

export const invoiceStatusAction = defineAction({
  path: '/admin/invoices/:id/status',
  form: FORMS.status,
  page: invoicePage,
  oneTime: true,
  async run({ deps, params, form, actor }) {
    const id = uuidParam(params.id, 'Invoice');
    const body = parseOrThrow(updateInvoiceBody, { status: field(form, 'status'), note: field(form, 'note') }, 'body');
    const to = body.status;
    const consequence = to === 'paid' || to === 'void' ? await statusConsequence(deps.db, id, to) : undefined;
    const asked = consequence ? askFirst(form, consequence) : undefined;
    if (asked) return asked;
    const { invoice } = await setInvoiceStatus(
      deps.db,
      id,
      body.status,
      actor,
      { settings: deps.config },
      body.note ?? null,
    );
    return { redirect: invoiceUrl(id), notice: `Invoice ${invoice.invoice_number} is now ${invoice.status}.` };
  },
});

/** A payment without a reference just like one recorded minutes ago asks first (the back button, C-13). */
async function askIfRecordedAlready(db: Db, body: z.output<typeof createPaymentBody>, form: FormValues) {
  const invoice = await findInvoice(db, body.invoiceId);
  if (!invoice) return undefined;
  const receivedAt = body.receivedAt ?? new Date();
  const like = await findLikeRecentPayment(db, {
    ...body,
    amount: storedAmount(body.amount, invoice.currency),
    receivedAt,
  });
  if (!like) return undefined;
  const minutes = Math.max(0, Math.round((Date.now() - like.created_at.getTime()) / 60_000));
  return askFirst(
    form,
    `A payment of ${formatMoney(like.amount, like.currency)} ${like.currency} (${label(like.payment_method)}, ` +
      `received ${like.received_at.toISOString().slice(0, 10)}) was recorded on this invoice ${minutes} minutes ago. ` +
      'Record a second, identical payment?',
  );
}

/**
 * What marking paid or voiding will do to the money, said before it is done (C-12); nothing to ask when the move
 * moves no money (nothing due) or the service will refuse it anyway (voiding an invoice with payments).
 */
async function statusConsequence(db: Db, id: string, to: 'paid' | 'void'): Promise<string | undefined> {
  const invoice = await findInvoice(db, id);
  if (!invoice) return undefined;
  const owed = amountDue(invoice);
  const due = `${formatMoney(owed, invoice.currency)} ${invoice.currency}`;
  if (to === 'paid')
    return owed.gt(0) && (invoice.status === 'issued' || invoice.status === 'overdue')
      ? `Marking ${invoice.invoice_number} paid records a manual payment of ${due} (the amount due), referenced ` +
          `marked_paid:${invoice.invoice_number}. To write the amount off instead, void the invoice.`
      : undefined;
  if (invoice.status === 'void' || money(invoice.amount_paid).gt(0)) return undefined;
  return invoice.status === 'draft'
    ? `Voiding the draft ${invoice.invoice_number} cancels it; this cannot be undone.`
    : `Voiding ${invoice.invoice_number} writes off ${due}: the customer will not be asked for it. ` +
        'This cannot be undone.';
}

export const invoicePaymentAction = defineAction({
  path: '/admin/invoices/:id/payments',
  form: FORMS.payment,
  page: invoicePage,
  oneTime: true,
  async run({ deps, params, form, actor }) {
    const id = uuidParam(params.id, 'Invoice');
    const body = parseOrThrow(
      createPaymentBody,
      {
        invoiceId: id,
        amount: field(form, 'amount')?.trim(),
        paymentMethod: field(form, 'paymentMethod'),
        providerReference: field(form, 'providerReference'),
        // Today's date means now: the payment keeps its time of day; another day is that day at 00:00 UTC.
        receivedAt:
          field(form, 'receivedAt') === new Date().toISOString().slice(0, 10) ? undefined : field(form, 'receivedAt'),
      },
      'body',
    );
    const asked = body.providerReference ? undefined : await askIfRecordedAlready(deps.db, body, form);
    if (asked) return asked;
    const payment = await receivePayment(deps.db, body, actor);
    return {
      redirect: invoiceUrl(id),
      notice: `Payment of ${formatMoney(payment.amount, payment.currency)} ${payment.currency} recorded.`,
    };
  },
});

export const invoiceCreditNoteAction = defineAction({
  path: '/admin/invoices/:id/credit-notes',
  form: FORMS.creditNote,
  page: invoicePage,
  oneTime: true,
  async run({ deps, params, form, actor }) {
    const id = uuidParam(params.id, 'Invoice');
    const body = parseOrThrow(createCreditNoteBody, { invoiceId: id, ...moneyBack(form) }, 'body');
    const note = await issueCreditNote(deps.db, body, actor);
    return {
      redirect: invoiceUrl(id),
      notice: `Credit note ${note.number} of ${formatMoney(note.amount, note.currency)} ${note.currency} issued.`,
    };
  },
});

export const paymentRefundAction = defineAction({
  path: '/admin/payments/:id/refunds',
  form: FORMS.refund,
  page: paymentRefundPage,
  oneTime: true,
  async run({ deps, params, form, actor }) {
    const paymentId = uuidParam(params.id, 'Payment');
    const body = parseOrThrow(createRefundBody, { paymentId, ...moneyBack(form) }, 'body');
    const payment = await getPayment(deps.db, paymentId);
    // Asked only of a refund the service can make; one beyond what is left is refused at once.
    const left = money(payment.amount).minus(payment.refunded_amount);
    const asked = money(body.amount).lte(left)
      ? askFirst(
          form,
          `Refunding ${formatMoney(body.amount, payment.currency)} ${payment.currency} sends the money back to the ` +
            'customer; this cannot be undone.',
        )
      : undefined;
    if (asked) return asked;
    const refund = await createRefund(deps.db, body, actor, { config: deps.config });
    return {
      redirect: invoiceUrl(payment.invoice_id),
      notice: `Refund of ${formatMoney(refund.amount, refund.currency)} ${refund.currency} recorded.`,
    };
  },
});

export const invoiceActions = [invoiceStatusAction, invoicePaymentAction, invoiceCreditNoteAction, paymentRefundAction];

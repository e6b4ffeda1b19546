/**
 * The actions of an invoice's page (console.md "money", C-6): each turns its form into the API's JSON body,
 * parses it with the API route's schema and calls the same service, then redirects to the invoice's page.
 */
import { createCreditNoteBody } from '../../credit-notes/schema.ts';
import { parseOrThrow } from '../../http/validate.ts';
import { updateInvoiceBody } from '../../invoices/schema.ts';
import { formatMoney } from '../../money.ts';
import { createPaymentBody } from '../../payments/schema.ts';
import { getPayment } from '../../payments/service.ts';
import { createRefundBody } from '../../refunds/schema.ts';
import { createRefund } from '../../refunds/service.ts';
import { issueCreditNote, receivePayment, setInvoiceStatus } from '../../settlement/service.ts';
import { field } from '../http/form.ts';
import { defineAction } from '../http/route.ts';
import { invoicePage, paymentRefundPage } from './invoices-detail.tsx';
import { uuidParam } from '../http/params.ts';
import { FORMS } from './invoices-forms.tsx';

const invoiceUrl = (id: string) => `/admin/invoices/${id}`;

export const invoiceStatusAction = defineAction({
  path: '/admin/invoices/:id/status',
  form: FORMS.status,
  page: invoicePage,
  async run({ deps, params, form, actor }) {
    const id = uuidParam(params.id, 'Invoice');
    const body = parseOrThrow(updateInvoiceBody, { status: field(form, 'status') }, 'body');
    const { invoice } = await setInvoiceStatus(deps.db, id, body.status, actor, { settings: deps.config });
    return { redirect: invoiceUrl(id), notice: `Invoice ${invoice.invoice_number} is now ${invoice.status}.` };
  },
});

export const invoicePaymentAction = defineAction({
  path: '/admin/invoices/:id/payments',
  form: FORMS.payment,
  page: invoicePage,
  async run({ deps, params, form, actor }) {
    const id = uuidParam(params.id, 'Invoice');
    const body = parseOrThrow(
      createPaymentBody,
      {
        invoiceId: id,
        amount: field(form, 'amount')?.trim(),
        paymentMethod: field(form, 'paymentMethod'),
        providerReference: field(form, 'providerReference'),
      },
      'body',
    );
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
  async run({ deps, params, form, actor }) {
    const id = uuidParam(params.id, 'Invoice');
    const body = parseOrThrow(
      createCreditNoteBody,
      { invoiceId: id, amount: field(form, 'amount')?.trim(), reason: field(form, 'reason') },
      'body',
    );
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
  async run({ deps, params, form, actor }) {
    const paymentId = uuidParam(params.id, 'Payment');
    const body = parseOrThrow(
      createRefundBody,
      { paymentId, amount: field(form, 'amount')?.trim(), reason: field(form, 'reason') },
      'body',
    );
    const refund = await createRefund(deps.db, body, actor, { config: deps.config });
    const payment = await getPayment(deps.db, paymentId);
    return {
      redirect: invoiceUrl(payment.invoice_id),
      notice: `Refund of ${formatMoney(refund.amount, refund.currency)} ${refund.currency} recorded.`,
    };
  },
});

export const invoiceActions = [invoiceStatusAction, invoicePaymentAction, invoiceCreditNoteAction, paymentRefundAction];

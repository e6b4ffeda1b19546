/**
 * The action forms of an invoice's page (C-6), each folded in a `<details>`. A form is offered when its action
 * makes sense for the invoice's status; the service still decides, and a refused form is always shown (open)
 * with the service's message and what was typed.
 */
import type { ComponentChildren } from 'preact';
import { Field, Form, kept, type FormState } from '../components/Form.tsx';
import { REASON_CODES } from '../../money-input.ts';
import { labelsOf } from '../components/labels.ts';
import { PAYMENT_METHODS, type InvoiceRow, type PaymentRow } from './invoices-types.ts';

export const FORMS = {
  status: 'invoice-status',
  payment: 'invoice-payment',
  creditNote: 'invoice-credit-note',
  refund: 'payment-refund',
} as const;

/** The status moves as the finance team says them: marking paid records a payment, voiding writes off (C-12). */
const STATUS_WORDS = {
  issued: 'Issued',
  paid: 'Paid (record a manual payment of the amount due)',
  void: 'Void (write off)',
};

/** The moves the page offers from each status (D-52); an admin never sees a button the service would refuse. */
const OFFERED_STATUSES: Record<InvoiceRow['status'], string[]> = {
  draft: ['issued', 'void'],
  issued: ['paid', 'void'],
  overdue: ['paid', 'void'],
  paid: [],
  void: [],
};

const mineOf = (state: FormState | undefined, name: string) => (state?.name === name ? state : undefined);

function Folded({ summary, open, children }: { summary: string; open: boolean; children: ComponentChildren }) {
  return (
    <details open={open ? true : undefined}>
      <summary>{summary}</summary>
      {children}
    </details>
  );
}

export function StatusForm({ invoice, csrf, state }: { invoice: InvoiceRow; csrf: string; state?: FormState }) {
  const mine = mineOf(state, FORMS.status);
  const offered = OFFERED_STATUSES[invoice.status];
  if (offered.length === 0 && !mine) return null;
  const options = offered.length > 0 ? offered : ['issued', 'void', 'paid'];
  return (
    <Folded summary="Change status" open={Boolean(mine)}>
      <Form
        name={FORMS.status}
        action={`/admin/invoices/${invoice.id}/status`}
        csrf={csrf}
        state={mine}
        submit="Change status"
        once
      >
        <Field
          label="New status"
          name="status"
          options={options}
          labels={STATUS_WORDS}
          value={kept(mine, FORMS.status, 'status', options[0])}
          state={mine}
        />
        <Field
          label="Note (optional; kept on the payment when marking paid)"
          name="note"
          type="textarea"
          value={kept(mine, FORMS.status, 'note')}
          state={mine}
        />
      </Form>
    </Folded>
  );
}

export function PaymentForm({
  invoice,
  due,
  csrf,
  state,
}: {
  invoice: InvoiceRow;
  due: string;
  csrf: string;
  state?: FormState;
}) {
  const mine = mineOf(state, FORMS.payment);
  const today = new Date().toISOString().slice(0, 10);
  if (invoice.status !== 'issued' && invoice.status !== 'overdue' && !mine) return null;
  return (
    <Folded summary="Record a payment" open={Boolean(mine)}>
      <Form
        name={FORMS.payment}
        action={`/admin/invoices/${invoice.id}/payments`}
        csrf={csrf}
        state={mine}
        submit="Record payment"
        once
      >
        <Field
          label={`Amount (${invoice.currency})`}
          name="amount"
          value={kept(mine, FORMS.payment, 'amount', due)}
          required
          state={mine}
        />
        <Field
          label="Payment method"
          name="paymentMethod"
          options={PAYMENT_METHODS}
          labels={labelsOf(PAYMENT_METHODS)}
          value={kept(mine, FORMS.payment, 'paymentMethod', 'bank_transfer')}
          state={mine}
        />
        <Field
          label="Date received"
          name="receivedAt"
          type="date"
          value={kept(mine, FORMS.payment, 'receivedAt', today)}
          required
          state={mine}
        />
        <Field
          label="Provider reference (optional)"
          name="providerReference"
          value={kept(mine, FORMS.payment, 'providerReference')}
          state={mine}
        />
      </Form>
    </Folded>
  );
}

export function CreditNoteForm({ invoice, csrf, state }: { invoice: InvoiceRow; csrf: string; state?: FormState }) {
  const mine = mineOf(state, FORMS.creditNote);
  if (!['issued', 'overdue', 'paid'].includes(invoice.status) && !mine) return null;
  return (
    <Folded summary="Issue a credit note" open={Boolean(mine)}>
      <Form
        name={FORMS.creditNote}
        action={`/admin/invoices/${invoice.id}/credit-notes`}
        csrf={csrf}
        state={mine}
        submit="Issue credit note"
        once
      >
        <Field
          label={`Amount (${invoice.currency})`}
          name="amount"
          value={kept(mine, FORMS.creditNote, 'amount')}
          required
          state={mine}
        />
        <ReasonFields state={mine} form={FORMS.creditNote} />
      </Form>
    </Folded>
  );
}

/** Why money goes back (C-14): the reason in words, required, and a code from the closed list. */
function ReasonFields({ state, form }: { state?: FormState; form: string }) {
  return (
    <>
      <Field label="Reason" name="reason" value={kept(state, form, 'reason')} required state={state} />
      <Field
        label="Reason code"
        name="reasonCode"
        options={['', ...REASON_CODES]}
        labels={labelsOf(REASON_CODES)}
        value={kept(state, form, 'reasonCode')}
        state={state}
      />
    </>
  );
}

/** Beside each payment: shown while something is left to refund, or when its refusal is being shown. */
export function RefundForm({
  payment,
  refundable,
  csrf,
  state,
}: {
  payment: PaymentRow;
  refundable: boolean;
  csrf: string;
  state?: FormState;
}) {
  if (!refundable && !state) return null;
  return (
    <Folded summary="Refund" open={Boolean(state)}>
      <Form
        name={FORMS.refund}
        scope={payment.id}
        action={`/admin/payments/${payment.id}/refunds`}
        csrf={csrf}
        state={state}
        submit="Refund"
        once
      >
        <Field
          label={`Amount (${payment.currency})`}
          name="amount"
          value={kept(state, FORMS.refund, 'amount')}
          required
          state={state}
        />
        <ReasonFields state={state} form={FORMS.refund} />
      </Form>
    </Folded>
  );
}

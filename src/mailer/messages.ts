/**
 * What each email type says (M-3), as structured content: a subject, a heading, paragraphs, a table of facts and at
 * most one button. template.tsx renders the same content as the HTML part and the text part, so they never differ.
 */
import { formatMoney, groupDigits } from '../money.ts';
import type { EmailType } from '../email-types.ts';

import type { Company } from '../settings/company.ts';

export type { Company };

/** What a template is given: the email's facts as written with the change, and what compose read for it. */
export interface MessageFacts {
  data: Record<string, unknown>;
  company: Company;
  customerName: string;
  invoiceNumber?: string | undefined;
  hostedUrl?: string | null | undefined;
}

export interface MessageContent {
  subject: string;
  heading: string;
  paragraphs: string[];
  facts: [label: string, value: string][];
  action?: { label: string; url: string } | undefined;
}

const str = (v: unknown): string => (v === null || v === undefined ? '' : String(v));
const amount = (data: Record<string, unknown>, key: string): string => {
  const currency = str(data.currency);
  return `${groupDigits(formatMoney(str(data[key] ?? '0'), currency))} ${currency}`;
};
const day = (v: unknown): string => (v ? new Date(str(v)).toISOString().slice(0, 10) : '');
const payLink = (f: MessageFacts, label = 'View and pay invoice') =>
  f.hostedUrl ? { label, url: f.hostedUrl } : undefined;

type Writer = (f: MessageFacts) => MessageContent;

const writers: Record<EmailType, Writer> = {
  'invoice.issued': (f) => ({
    subject: `Invoice ${f.invoiceNumber} from ${f.company.name}`,
    heading: `Invoice ${f.invoiceNumber}`,
    paragraphs: [`Hello ${f.customerName}, here is your invoice from ${f.company.name}. The PDF is attached.`],
    facts: [
      ['Invoice number', str(f.invoiceNumber)],
      ['Total', amount(f.data, 'total')],
      ['Amount due', amount(f.data, 'amountDue')],
      ['Due date', day(f.data.dueDate) || 'On receipt'],
    ],
    action: payLink(f),
  }),
  'payment.receipt': (f) => ({
    subject: `Receipt for invoice ${f.invoiceNumber}`,
    heading: 'Payment received',
    paragraphs: [`Thank you, ${f.customerName}. We received your payment.`],
    facts: [
      ['Amount paid', amount(f.data, 'amount')],
      ['Invoice number', str(f.invoiceNumber)],
      ['Amount still due', amount(f.data, 'amountDue')],
    ],
    action: payLink(f, 'View invoice'),
  }),
  'payment.failed': (f) => ({
    subject: `Payment failed for invoice ${f.invoiceNumber}`,
    heading: 'Your payment did not go through',
    paragraphs: [
      `Hello ${f.customerName}, we could not charge your payment method for invoice ${f.invoiceNumber}.`,
      f.data.nextAttemptAt
        ? `We will try again on ${day(f.data.nextAttemptAt)}. You can pay now with the link below.`
        : 'You can pay with the link below.',
    ],
    facts: [
      ['Invoice number', str(f.invoiceNumber)],
      ['Amount due', amount(f.data, 'amountDue')],
      ['Next attempt', f.data.nextAttemptAt ? day(f.data.nextAttemptAt) : 'None scheduled'],
    ],
    action: payLink(f, 'Pay invoice'),
  }),
  'dunning.final': (f) => ({
    subject: `Final notice: invoice ${f.invoiceNumber} is unpaid`,
    heading: 'Final notice',
    paragraphs: [
      `Hello ${f.customerName}, every attempt to charge invoice ${f.invoiceNumber} has failed.`,
      f.data.finalAction === 'cancel'
        ? 'Your subscription has been canceled. Paying the invoice settles what you owe.'
        : 'Your subscription stays past due until the invoice is paid.',
    ],
    facts: [
      ['Invoice number', str(f.invoiceNumber)],
      ['Amount due', amount(f.data, 'amountDue')],
    ],
    action: payLink(f, 'Pay invoice'),
  }),
  'refund.issued': (f) => ({
    subject: `Refund for invoice ${f.invoiceNumber}`,
    heading: 'Refund issued',
    paragraphs: [`Hello ${f.customerName}, we refunded a payment to you. It may take a few days to appear.`],
    facts: [
      ['Amount refunded', amount(f.data, 'amount')],
      ['Invoice number', str(f.invoiceNumber)],
    ],
  }),
  'credit_note.issued': (f) => ({
    subject: `Credit note for invoice ${f.invoiceNumber}`,
    heading: 'Credit note issued',
    paragraphs: [`Hello ${f.customerName}, we issued a credit note on your invoice.`],
    facts: [
      ['Amount', amount(f.data, 'amount')],
      ['Invoice number', str(f.invoiceNumber)],
      ['Reason', str(f.data.reason) || '—'],
    ],
    action: payLink(f, 'View invoice'),
  }),
  'trial.ending': (f) => ({
    subject: `Your ${str(f.data.planName)} trial ends on ${day(f.data.trialEnd)}`,
    heading: 'Your trial is ending',
    paragraphs: [
      `Hello ${f.customerName}, your trial of ${str(f.data.planName)} ends on ${day(f.data.trialEnd)}.`,
      `After it, the plan costs ${amount(f.data, 'price')} per ${str(f.data.interval)}.`,
    ],
    facts: [
      ['Plan', str(f.data.planName)],
      ['Trial ends', day(f.data.trialEnd)],
      ['Price after the trial', `${amount(f.data, 'price')} / ${str(f.data.interval)}`],
    ],
  }),
  'renewal.upcoming': (f) => ({
    subject: `Your ${str(f.data.planName)} subscription renews on ${day(f.data.renewsAt)}`,
    heading: 'Your subscription renews soon',
    paragraphs: [
      `Hello ${f.customerName}, your yearly subscription to ${str(f.data.planName)} renews on ` +
        `${day(f.data.renewsAt)}.`,
    ],
    facts: [
      ['Plan', str(f.data.planName)],
      ['Renews on', day(f.data.renewsAt)],
      ['Amount', amount(f.data, 'amount')],
    ],
  }),
  'license.issued': (f) => ({
    subject: `Your license key for ${str(f.data.productName)}`,
    heading: 'Your license key',
    paragraphs: [`Hello ${f.customerName}, here is your license key for ${str(f.data.productName)}.`],
    facts: [
      ['License key', str(f.data.licenseKey)],
      ['Product', str(f.data.productName)],
      ['Expires', day(f.data.expiresAt) || 'Never'],
      [
        'Device limit',
        f.data.maxDevices === null || f.data.maxDevices === undefined ? 'Unlimited' : str(f.data.maxDevices),
      ],
    ],
  }),
  'portal.code': (f) => ({
    subject: `Your sign-in code for ${f.company.name}`,
    heading: 'Your sign-in code',
    paragraphs: [
      `Use this code to sign in to your ${f.company.name} billing portal. ` +
        `It is valid for ${str(f.data.expiresInMinutes)} minutes. If you did not ask for it, ignore this email.`,
    ],
    facts: [['Code', str(f.data.code)]],
  }),
};

export function messageContent(type: EmailType, facts: MessageFacts): MessageContent {
  return writers[type](facts);
}

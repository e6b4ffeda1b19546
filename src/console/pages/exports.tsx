/**
 * The exports C-17 added, each with the filters of its list: one row per refund, the credit notes, the
 * subscriptions and the audit log. Streamed in keyset batches like the invoice and payment exports.
 */
import { z } from 'zod';
import { listAuditLogQuery } from '../../audit/schema.ts';
import { listAuditLog } from '../../audit/service.ts';
import { listCreditNotes } from '../../credit-notes/service.ts';
import { uuid } from '../../http/schemas.ts';
import { formatMoney } from '../../money.ts';
import { findPlans } from '../../plans/service.ts';
import { listRefunds } from '../../refunds/service.ts';
import { SUBSCRIPTION_STATUSES } from '../../subscriptions/schema.ts';
import { listSubscriptions } from '../../subscriptions/service.ts';
import { defineExport } from '../http/route.ts';
import { namesInBatch } from './export-names.ts';
import { createdRange, everyBatch, moneyListQuery } from './invoices-filters.tsx';

const refundsQuery = moneyListQuery(['pending', 'succeeded'] as const);

/** `/admin/refunds/export.csv?status=&customerId=&from=&to=`: one row per refund (dated by when it was made). */
export const refundsExport = defineExport({
  path: '/admin/refunds/export.csv',
  filename: 'refunds.csv',
  query: refundsQuery,
  header: [
    'id',
    'paymentId',
    'invoiceId',
    'invoiceNumber',
    'customerId',
    'customerName',
    'paymentMethod',
    'currency',
    'amount',
    'status',
    'reasonCode',
    'reason',
    'providerRefundId',
    'createdAt (UTC)',
  ],
  async *rows({ deps, query }) {
    const filters = { customerId: query.customerId, ...createdRange(query) };
    for await (const batch of everyBatch((page) => listRefunds(deps.db, page, filters))) {
      const { customerName, invoiceNumber } = await namesInBatch(deps.db, batch);
      for (const r of batch) {
        if (query.status && r.status !== query.status) continue;
        yield [
          r.id,
          r.payment_id,
          r.invoice_id,
          invoiceNumber(r),
          r.customer_id,
          customerName(r),
          r.payment_method,
          r.currency,
          formatMoney(r.amount, r.currency),
          r.status,
          r.reason_code,
          r.reason,
          r.provider_refund_id,
          r.created_at,
        ];
      }
    }
  },
});

/** `/admin/credit-notes/export.csv?customerId=&invoiceId=`. */
export const creditNotesExport = defineExport({
  path: '/admin/credit-notes/export.csv',
  filename: 'credit-notes.csv',
  query: z.object({ customerId: uuid.optional(), invoiceId: uuid.optional() }),
  header: [
    'id',
    'number',
    'invoiceId',
    'invoiceNumber',
    'customerId',
    'customerName',
    'currency',
    'amount',
    'toStoreCredit',
    'reasonCode',
    'reason',
    'createdAt (UTC)',
  ],
  async *rows({ deps, query }) {
    for await (const batch of everyBatch((page) => listCreditNotes(deps.db, page, query))) {
      const { customerName, invoiceNumber } = await namesInBatch(deps.db, batch);
      for (const n of batch)
        yield [
          n.id,
          n.number,
          n.invoice_id,
          invoiceNumber(n),
          n.customer_id,
          customerName(n),
          n.currency,
          formatMoney(n.amount, n.currency),
          formatMoney(n.to_balance, n.currency),
          n.reason_code,
          n.reason,
          n.created_at,
        ];
    }
  },
});

/** `/admin/subscriptions/export.csv?status=&customerId=&planId=`: the list's filters. */
export const subscriptionsExport = defineExport({
  path: '/admin/subscriptions/export.csv',
  filename: 'subscriptions.csv',
  query: z.object({
    status: z.enum(SUBSCRIPTION_STATUSES).optional(),
    customerId: uuid.optional(),
    planId: uuid.optional(),
  }),
  header: [
    'id',
    'customerId',
    'customerName',
    'planId',
    'planName',
    'currency',
    'basePrice',
    'status',
    'billingCycle',
    'currentPeriodStart (UTC)',
    'currentPeriodEnd (UTC)',
    'trialEnd (UTC)',
    'cancelAtPeriodEnd',
    'canceledAt (UTC)',
    'createdAt (UTC)',
  ],
  async *rows({ deps, query }) {
    for await (const batch of everyBatch((page) => listSubscriptions(deps.db, page, query))) {
      const [{ customerName }, plans] = await Promise.all([
        namesInBatch(deps.db, batch),
        findPlans(deps.db, [...new Set(batch.map((s) => s.plan_id))]),
      ]);
      for (const s of batch) {
        const plan = plans.get(s.plan_id);
        yield [
          s.id,
          s.customer_id,
          customerName(s),
          s.plan_id,
          plan?.name ?? '',
          plan?.currency ?? '',
          plan ? formatMoney(plan.base_price, plan.currency) : '',
          s.status,
          s.billing_cycle,
          s.current_period_start,
          s.current_period_end,
          s.trial_end,
          s.cancel_at_period_end ? 'yes' : 'no',
          s.canceled_at,
          s.created_at,
        ];
      }
    }
  },
});

/** `/admin/audit-log/export.csv?actor=&targetType=&targetId=&action=`: the list's filters. */
export const auditLogExport = defineExport({
  path: '/admin/audit-log/export.csv',
  filename: 'audit-log.csv',
  query: listAuditLogQuery.omit({ limit: true, startingAfter: true }),
  header: [
    'id',
    'time (UTC)',
    'actor',
    'actorEmail',
    'action',
    'targetType',
    'targetId',
    'before',
    'after',
    'requestId',
    'ip',
  ],
  async *rows({ deps, query }) {
    for await (const batch of everyBatch((page) => listAuditLog(deps.db, page, query)))
      for (const a of batch)
        yield [
          a.id,
          a.created_at,
          a.actor,
          a.actor_email,
          a.action,
          a.target_type,
          a.target_id,
          a.before ? JSON.stringify(a.before) : '',
          a.after ? JSON.stringify(a.after) : '',
          a.request_id,
          a.ip,
        ];
  },
});

/** Before the object pages: `/admin/subscriptions/:id` would take `export.csv` as an id. */
export const exportRoutes = [refundsExport, creditNotesExport, subscriptionsExport, auditLogExport];

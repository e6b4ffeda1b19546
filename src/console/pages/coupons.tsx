import { z } from 'zod';
import { COUPON_DURATIONS, createCouponBody } from '../../coupons/schema.ts';
import { createCoupon, listCoupons } from '../../coupons/service.ts';
import { uuid } from '../../http/schemas.ts';
import { parseOrThrow } from '../../http/validate.ts';
import { Field, Form, kept, type FormState } from '../components/Form.tsx';
import { money } from '../components/format.ts';
import { Layout } from '../components/Layout.tsx';
import { nextPageUrl, Table } from '../components/Table.tsx';
import { field, numberField, typedField, type FormValues } from '../http/form.ts';
import { defineAction, definePage } from '../http/route.ts';
import { Nowrap, When } from './customers-parts.tsx';

const PAGE_SIZE = 50;
const FORM = 'create';

type Coupon = Awaited<ReturnType<typeof listCoupons>>['rows'][number];

/** The form as the API's JSON (D-46): empty fields absent, numbers as numbers (NaN stays for the schema to name). */
function couponFields(form: FormValues) {
  return {
    code: typedField(form, 'code'),
    percentOff: field(form, 'percentOff')?.trim(),
    amountOff: field(form, 'amountOff')?.trim(),
    currency: field(form, 'currency'),
    duration: field(form, 'duration'),
    durationInCycles: numberField(form, 'durationInCycles'),
    maxRedemptions: numberField(form, 'maxRedemptions'),
    expiresAt: field(form, 'expiresAt')?.trim(),
  };
}

/** The create form's fields, named as the API's (code, percentOff | amountOff + currency, duration, ...). */
function CouponFields({ state }: { state?: FormState }) {
  const mine = state?.name === FORM ? state : undefined;
  const value = (name: string, fallback = '') => kept(state, FORM, name, fallback);
  return (
    <>
      <Field label="Code" name="code" value={value('code')} state={mine} />
      <Field label="Percent off (0-100]" name="percentOff" value={value('percentOff')} state={mine} />
      <Field label="Amount off" name="amountOff" value={value('amountOff')} state={mine} />
      <Field label="Currency (with amount off)" name="currency" value={value('currency')} state={mine} />
      <Field
        label="Duration"
        name="duration"
        options={COUPON_DURATIONS}
        value={value('duration', 'once')}
        state={mine}
      />
      <Field label="Cycles (repeating only)" name="durationInCycles" value={value('durationInCycles')} state={mine} />
      <Field label="Max redemptions" name="maxRedemptions" value={value('maxRedemptions')} state={mine} />
      <Field label="Expires at (YYYY-MM-DD or ISO 8601)" name="expiresAt" value={value('expiresAt')} state={mine} />
    </>
  );
}

const discount = (c: Coupon) =>
  c.percent_off !== null ? `${c.percent_off}% off` : `${money(c.amount_off!, c.currency!)} off`;
const duration = (c: Coupon) => (c.duration === 'repeating' ? `${c.duration_in_cycles} cycles` : c.duration);

/** `/admin/coupons` (console.md, with the products): every coupon newest first, and the create form. */
export const couponsPage = definePage({
  path: '/admin/coupons',
  query: z.object({ startingAfter: uuid.optional() }),
  async render({ deps, query, viewer, notice, state }) {
    const { rows, hasMore } = await listCoupons(deps.db, {
      limit: PAGE_SIZE,
      startingAfter: query.startingAfter,
      newestFirst: true,
    });
    return (
      <Layout title="Coupons" viewer={viewer} section="Products" notice={notice}>
        <p class="crumbs">
          <a href="/admin/products">Products</a> · <a href="/admin/tax-rates">Tax rates</a>
        </p>
        <h1>Coupons</h1>
        <details open={state?.name === FORM}>
          <summary>New coupon</summary>
          <Form name={FORM} action="/admin/coupons" csrf={viewer.csrf} state={state} submit="Create coupon">
            <CouponFields state={state} />
          </Form>
        </details>
        <div class="words">
          <Table
            rows={rows}
            empty="No coupons yet."
            next={nextPageUrl('/admin/coupons', {}, rows.at(-1)?.id, hasMore)}
            columns={[
              { header: 'Code', cell: (c) => <code>{c.code}</code> },
              { header: 'Discount', cell: (c) => <Nowrap>{discount(c)}</Nowrap> },
              { header: 'Duration', cell: (c) => <Nowrap>{duration(c)}</Nowrap> },
              { header: 'Redeemed', numeric: true, cell: (c) => `${c.times_redeemed} / ${c.max_redemptions ?? '∞'}` },
              { header: 'Expires', cell: (c) => (c.expires_at ? <When value={c.expires_at} /> : 'never') },
              { header: 'Created', cell: (c) => <When value={c.created_at} /> },
            ]}
          />
        </div>
      </Layout>
    );
  },
});

/** `POST /admin/coupons`: the API's create (D-46), the same schema and service. */
export const createCouponAction = defineAction({
  path: '/admin/coupons',
  form: FORM,
  page: couponsPage,
  async run({ deps, form, actor }) {
    const coupon = await createCoupon(deps.db, parseOrThrow(createCouponBody, couponFields(form), 'body'), actor);
    return { redirect: '/admin/coupons', notice: `Coupon ${coupon.code} created.` };
  },
});

export const couponRoutes = [couponsPage, createCouponAction];

/**
 * C-11 audit log, on the catalog (products, plans, coupons): one row per admin write, API or console; none for a
 * refusal.
 */
import test from 'ava';
import { SYSTEM_ACTOR } from '../../src/actor.ts';
import { createProduct } from '../../src/products/service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { consoleCsrf, loginAsAdmin } from '../helpers/auth.ts';
import { request } from '../helpers/http.ts';
import { auditMark, expectNoAudit, expectOneAudit } from './fixtures.ts';

let app: TestApp;
let cookie: string;
let adminEmail: string;
test.before(async () => {
  app = await startTestApp();
  ({ cookie, email: adminEmail } = await loginAsAdmin(app.baseUrl, app.db));
});
test.after.always(async () => app?.close());

const api = (path: string, options: Parameters<typeof request>[2] = {}) =>
  request(app.baseUrl, path, { cookie, ...options });

/** A console form post as a browser sends it; answers the status (303 when done, the page's status when refused). */
async function consolePost(path: string, fields: Record<string, string>, requestId?: string): Promise<number> {
  const csrf = await consoleCsrf(app.baseUrl, cookie);
  const res = await fetch(`${app.baseUrl}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      cookie,
      'content-type': 'application/x-www-form-urlencoded',
      ...(requestId ? { 'x-request-id': requestId } : {}),
    },
    body: new URLSearchParams({ _csrf: csrf, ...fields }).toString(),
  });
  await res.arrayBuffer();
  return res.status;
}

async function newProduct(body: Record<string, unknown> = {}): Promise<string> {
  const res = await api('/api/products', {
    body: { name: 'Catalog item', productType: 'saas', price: '10.00', ...body },
  });
  if (res.status !== 201) throw new Error(`create product: ${res.status} ${res.text}`);
  return res.body.id;
}

test.serial(
  'product create, update, archive, unarchive and delete through the API each leave one row with the changed fields',
  async (t) => {
    let mark = await auditMark(app.db);
    const created = await api('/api/products', {
      body: { name: 'Audited', productType: 'saas', price: '29.00' },
      headers: { 'x-request-id': 'req-product-1' },
    });
    t.is(created.status, 201);
    const id = created.body.id;
    const row = await expectOneAudit(t, app.db, mark, {
      action: 'product.create',
      target_type: 'product',
      target_id: id,
      actor_email: adminEmail,
      request_id: 'req-product-1',
      before: null,
    });
    t.deepEqual(row.after, { name: 'Audited', productType: 'saas', price: '29.00', currency: 'USD', status: 'active' });

    mark = await auditMark(app.db);
    t.is(
      (
        await api(`/api/products/${id}`, {
          method: 'PUT',
          body: { description: 'Now described', price: '39.00', name: 'Audited' },
        })
      ).status,
      200,
    );
    await expectOneAudit(t, app.db, mark, {
      action: 'product.update',
      target_id: id,
      before: { description: null, price: '29.00' },
      after: { description: 'Now described', price: '39.00' },
    });

    mark = await auditMark(app.db);
    t.is((await api(`/api/products/${id}`, { method: 'PUT', body: { status: 'archived' } })).status, 200);
    await expectOneAudit(t, app.db, mark, {
      action: 'product.archive',
      before: { status: 'active' },
      after: { status: 'archived' },
    });

    mark = await auditMark(app.db);
    t.is((await api(`/api/products/${id}`, { method: 'PUT', body: { status: 'active' } })).status, 200);
    await expectOneAudit(t, app.db, mark, {
      action: 'product.unarchive',
      before: { status: 'archived' },
      after: { status: 'active' },
    });

    mark = await auditMark(app.db);
    t.is((await api(`/api/products/${id}`, { method: 'DELETE' })).status, 204);
    const deleted = await expectOneAudit(t, app.db, mark, { action: 'product.delete', target_id: id, after: null });
    t.like(deleted.before, { name: 'Audited', price: '39.00', description: 'Now described' });
  },
);

test.serial('the derived metrics are never recorded as an admin change', async (t) => {
  const id = await newProduct({ name: 'Measured' });
  await app.db('products').where({ id }).update({
    monthly_revenue: '123.45',
    active_users: 7,
    daily_active_users: 3,
    churn_rate: '0.1000',
    metrics_refreshed_at: new Date(),
  });
  const mark = await auditMark(app.db);
  // A body carrying the metrics is refused (D-90): they are not fields of the API (D-20). Without them, only the name
  // changes.
  t.is(
    (
      await api(`/api/products/${id}`, {
        method: 'PUT',
        body: { name: 'Measured again', monthlyRevenue: '1.00', activeUsers: 1 },
      })
    ).status,
    400,
  );
  t.is((await api(`/api/products/${id}`, { method: 'PUT', body: { name: 'Measured again' } })).status, 200);
  const row = await expectOneAudit(t, app.db, mark, { action: 'product.update' });
  t.deepEqual(row.before, { name: 'Measured' });
  t.deepEqual(row.after, { name: 'Measured again' });
  t.like(await app.db('products').where({ id }).first(), { monthly_revenue: '123.45', active_users: 7 });
});

test.serial('plan create and update and coupon create through the API each leave one row', async (t) => {
  const productId = await newProduct();
  let mark = await auditMark(app.db);
  const plan = await api('/api/billing/plans', {
    body: {
      productId,
      name: 'Pro',
      pricingModel: 'flat',
      billingCycle: 'monthly',
      basePrice: '29.90',
      currency: 'usd',
    },
  });
  t.is(plan.status, 201);
  const created = await expectOneAudit(t, app.db, mark, {
    action: 'plan.create',
    target_type: 'plan',
    target_id: plan.body.id,
    actor_email: adminEmail,
    before: null,
  });
  t.deepEqual(created.after, {
    productId,
    name: 'Pro',
    pricingModel: 'flat',
    billingCycle: 'monthly',
    basePrice: '29.90',
    currency: 'USD',
    active: true,
    taxRateIds: [],
  });

  mark = await auditMark(app.db);
  t.is(
    (await api(`/api/billing/plans/${plan.body.id}`, { method: 'PUT', body: { name: 'Pro (legacy)', active: false } }))
      .status,
    200,
  );
  await expectOneAudit(t, app.db, mark, {
    action: 'plan.update',
    target_id: plan.body.id,
    before: { name: 'Pro', active: true },
    after: { name: 'Pro (legacy)', active: false },
  });

  mark = await auditMark(app.db);
  const coupon = await api('/api/billing/coupons', {
    body: {
      code: 'AUDIT10',
      amountOff: '10.00',
      currency: 'USD',
      duration: 'repeating',
      durationInCycles: 2,
      expiresAt: '2031-01-01',
    },
  });
  t.is(coupon.status, 201);
  const couponRow = await expectOneAudit(t, app.db, mark, {
    action: 'coupon.create',
    target_type: 'coupon',
    target_id: coupon.body.id,
    before: null,
  });
  t.deepEqual(couponRow.after, {
    code: 'AUDIT10',
    amountOff: '10.00',
    currency: 'USD',
    duration: 'repeating',
    durationInCycles: 2,
    expiresAt: '2031-01-01T00:00:00.000Z',
  });
});

test.serial('a refused, invalid or rolled-back catalog write leaves no row', async (t) => {
  const used = await newProduct({ name: 'Used' });
  const plan = await api('/api/billing/plans', {
    body: {
      productId: used,
      name: 'P',
      pricingModel: 'flat',
      billingCycle: 'monthly',
      basePrice: '1',
      currency: 'USD',
    },
  });
  await api('/api/billing/coupons', { body: { code: 'TAKEN', percentOff: '5', duration: 'once' } });
  const unknown = '00000000-0000-4000-8000-000000000000';
  const mark = await auditMark(app.db);
  t.is((await api(`/api/products/${used}`, { method: 'DELETE' })).status, 409);
  t.is((await api('/api/products', { body: { name: 'No type', price: '1' } })).status, 400);
  t.is((await api(`/api/products/${unknown}`, { method: 'PUT', body: { name: 'X' } })).status, 404);
  t.is((await api(`/api/products/${unknown}`, { method: 'DELETE' })).status, 404);
  t.is(
    (
      await api('/api/billing/plans', {
        body: {
          productId: unknown,
          name: 'P',
          pricingModel: 'flat',
          billingCycle: 'monthly',
          basePrice: '1',
          currency: 'USD',
        },
      })
    ).status,
    400,
  );
  t.is(
    (
      await api('/api/billing/plans', {
        body: {
          productId: used,
          name: 'P',
          pricingModel: 'tiered',
          billingCycle: 'monthly',
          basePrice: '1',
          currency: 'USD',
        },
      })
    ).status,
    400,
  );
  t.is((await api(`/api/billing/plans/${unknown}`, { method: 'PUT', body: { name: 'X' } })).status, 404);
  t.is((await api(`/api/billing/plans/${plan.body.id}`, { method: 'PUT', body: { name: '' } })).status, 400);
  t.is((await api('/api/billing/coupons', { body: { code: 'taken', percentOff: '5', duration: 'once' } })).status, 409);
  t.is(
    (
      await api('/api/billing/coupons', {
        body: { code: 'BOTH', percentOff: '5', amountOff: '1', currency: 'USD', duration: 'once' },
      })
    ).status,
    400,
  );
  await t.throwsAsync(
    app.db.transaction(async (trx) => {
      await createProduct(trx, { name: 'Rolled back', productType: 'api', price: '1' }, SYSTEM_ACTOR);
      throw new Error('the caller rolls back');
    }),
    { message: 'the caller rolls back' },
  );
  t.is(await app.db('products').where({ name: 'Rolled back' }).first(), undefined);
  await expectNoAudit(t, app.db, mark);
});

test.serial(
  'each console action leaves one row with the signed-in admin and its request id; a refused one none',
  async (t) => {
    const find = (name: string) => app.db('products').where({ name }).first();
    let mark = await auditMark(app.db);
    t.is(
      await consolePost(
        '/admin/products',
        { name: 'Console made', productType: 'api', price: '5.00', currency: 'USD', description: '' },
        'req-console-1',
      ),
      303,
    );
    const product = await find('Console made');
    const created = await expectOneAudit(t, app.db, mark, {
      action: 'product.create',
      target_id: product.id,
      actor_email: adminEmail,
      request_id: 'req-console-1',
    });
    t.deepEqual(created.after, {
      name: 'Console made',
      productType: 'api',
      price: '5.00',
      currency: 'USD',
      status: 'active',
    });

    const url = `/admin/products/${product.id}`;
    const steps: [string, Record<string, string>, Record<string, unknown>][] = [
      [
        url,
        { name: 'Console edited', productType: 'api', price: '5.00', currency: 'USD', description: 'Said' },
        {
          action: 'product.update',
          before: { name: 'Console made', description: null },
          after: { name: 'Console edited', description: 'Said' },
        },
      ],
      [
        `${url}/archive`,
        {},
        { action: 'product.archive', before: { status: 'active' }, after: { status: 'archived' } },
      ],
      [
        `${url}/unarchive`,
        {},
        { action: 'product.unarchive', before: { status: 'archived' }, after: { status: 'active' } },
      ],
      [
        `${url}/plans`,
        { name: 'Console plan', pricingModel: 'flat', billingCycle: 'yearly', basePrice: '50', currency: 'USD' },
        { action: 'plan.create', target_type: 'plan', before: null },
      ],
      [
        '/admin/coupons',
        { code: 'CONSOLE5', percentOff: '5', duration: 'forever' },
        {
          action: 'coupon.create',
          target_type: 'coupon',
          after: { code: 'CONSOLE5', percentOff: '5', duration: 'forever' },
        },
      ],
    ];
    for (const [path, fields, expected] of steps) {
      mark = await auditMark(app.db);
      t.is(await consolePost(path, fields), 303, path);
      await expectOneAudit(t, app.db, mark, { actor_email: adminEmail, ...expected });
    }
    const plan = await app.db('plans').where({ product_id: product.id }).first();
    mark = await auditMark(app.db);
    t.is(await consolePost(`${url}/plans/${plan.id}`, { name: 'Console plan', active: 'false' }), 303);
    await expectOneAudit(t, app.db, mark, {
      action: 'plan.update',
      target_id: plan.id,
      before: { active: true },
      after: { active: false },
    });

    // Refused: a product in use, a bad plan, a coupon with both discounts, an edit to an empty name.
    mark = await auditMark(app.db);
    t.is(await consolePost(`${url}/delete`, {}), 409);
    t.is(
      await consolePost(`${url}/plans`, {
        name: 'Bad',
        pricingModel: 'flat',
        billingCycle: 'monthly',
        basePrice: 'x',
        currency: 'USD',
      }),
      400,
    );
    t.is(
      await consolePost('/admin/coupons', {
        code: 'BOTH2',
        percentOff: '5',
        amountOff: '1',
        currency: 'USD',
        duration: 'once',
      }),
      400,
    );
    t.is(await consolePost(url, { name: ' ' }), 400);
    await expectNoAudit(t, app.db, mark);

    const unused = await newProduct({ name: 'Console deletable' });
    mark = await auditMark(app.db);
    t.is(await consolePost(`/admin/products/${unused}/delete`, {}), 303);
    await expectOneAudit(t, app.db, mark, {
      action: 'product.delete',
      target_id: unused,
      actor_email: adminEmail,
      after: null,
    });
  },
);

import test from 'ava';
import { loadConfig } from '../../src/config.ts';
import { warnUnconfiguredProviders } from '../../src/providers/configured.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { postProviderA, postProviderB, postProviderC, providerAEvent } from '../helpers/provider-events.ts';
import { request } from '../helpers/http.ts';
import { adminCtx, makeInvoice, type Ctx } from '../payments/fixtures.ts';

// D-92: an unset provider secret is a set-up state: 503 provider_not_configured naming the variable, and a warning at
// start-up.

const UNSET = {
  PROVIDER_A_SECRET_KEY: '',
  PROVIDER_A_WEBHOOK_SECRET: '',
  PROVIDER_B_SECRET_KEY: '',
  PROVIDER_B_CALLBACK_TOKEN: '',
  PROVIDER_C_WEBHOOK_SECRET: '',
};

let app: TestApp;
let c: Ctx;
test.before(async () => {
  app = await startTestApp(UNSET);
  c = await adminCtx(app);
});
test.after.always(async () => app?.close());

const count = async (table: string) => Number((await app.db(table).count({ n: '*' }).first())!.n);

for (const [provider, variable, post] of [
  ['provider_a', 'PROVIDER_A_WEBHOOK_SECRET', postProviderA],
  ['provider_b', 'PROVIDER_B_CALLBACK_TOKEN', postProviderB],
  ['provider_c', 'PROVIDER_C_WEBHOOK_SECRET', postProviderC],
] as const) {
  test.serial(`a ${provider} webhook without its secret set is 503 naming ${variable}, nothing stored`, async (t) => {
    const before = await count('provider_events');
    const res = await post(app.baseUrl, providerAEvent.invoicePaid('00000000-0000-4000-8000-000000000000', 100, 'USD'));
    t.is(res.status, 503);
    t.is(res.body.error.code, 'provider_not_configured');
    t.regex(res.body.error.message, new RegExp(`set ${variable}`));
    t.deepEqual(res.body.error.details, [{ path: variable, message: 'is not set' }]);
    t.is(await count('provider_events'), before);
  });
}

for (const [provider, variable, body] of [
  [
    'provider_a',
    'PROVIDER_A_SECRET_KEY',
    { successUrl: 'https://shop.example/ok', cancelUrl: 'https://shop.example/no' },
  ],
  ['provider_b', 'PROVIDER_B_SECRET_KEY', { successUrl: 'https://shop.example/ok' }],
] as const) {
  test.serial(
    `a ${provider} checkout without its secret key is 503 naming ${variable}, nothing recorded`,
    async (t) => {
      const invoice = await makeInvoice(c);
      const [sessions, audit] = [await count('checkout_sessions'), await count('audit_log')];
      const res = await request(app.baseUrl, `/api/billing/checkout/${provider}`, {
        cookie: c.cookie,
        body: { invoiceId: invoice.id, ...body },
      });
      t.is(res.status, 503);
      t.is(res.body.error.code, 'provider_not_configured');
      t.is(res.body.error.message, `${provider} is not configured: set ${variable}`);
      t.is(await count('checkout_sessions'), sessions);
      t.is(await count('audit_log'), audit);
    },
  );
}

test('start-up warns once per provider that is not set up, naming what to set', (t) => {
  const lines: [Record<string, unknown>, string][] = [];
  const logger = { warn: (fields: Record<string, unknown>, message: string) => lines.push([fields, message]) };
  warnUnconfiguredProviders(
    loadConfig({
      ...UNSET,
      PROVIDER_A_SECRET_KEY: 'sk_a',
      PROVIDER_A_WEBHOOK_SECRET: 'whsec_a',
      PROVIDER_B_SECRET_KEY: 'sk_b',
    }),
    logger as never,
  );
  t.deepEqual(
    lines.map(([fields]) => fields),
    [
      { provider: 'provider_b', missing: ['PROVIDER_B_CALLBACK_TOKEN'] },
      { provider: 'provider_c', missing: ['PROVIDER_C_WEBHOOK_SECRET'] },
    ],
  );
  t.regex(lines[0]![1], /provider_b is not configured \(PROVIDER_B_CALLBACK_TOKEN unset\)/);
  lines.length = 0;
  warnUnconfiguredProviders(
    loadConfig({
      PROVIDER_A_SECRET_KEY: 'a',
      PROVIDER_A_WEBHOOK_SECRET: 'a',
      PROVIDER_B_SECRET_KEY: 'b',
      PROVIDER_B_CALLBACK_TOKEN: 'b',
      PROVIDER_C_WEBHOOK_SECRET: 'c',
    }),
    logger as never,
  );
  t.deepEqual(lines, []);
});

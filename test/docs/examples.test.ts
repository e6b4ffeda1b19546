/**
 * D-94: the docs cannot drift. Each operation's documented example request (its body from the zod schema's
 * metadata, its required query parameters' examples) is sent to the running service with the credential of
 * its auth kind, and must get one of the success statuses the document lists, with an answer its schema
 * accepts.
 *
 * How the examples name objects: every id inside an example is a placeholder from src/http/example-ids.ts
 * (EXAMPLE_ID.customer, EXAMPLE_ID.invoice, ...). This test builds the security suites' world first (customer
 * A with its product, plan, subscription, invoices, payment, license, device, payment method and API key; a
 * webhook endpoint and delivery) and replaces each placeholder with the real id of its kind; a path
 * parameter names the world's object of its collection (world.ts existingParam). The operations that need
 * an object of their own (a DELETE of something nothing uses, issuing a draft invoice) run last, on the
 * object their collection's example POST created.
 */
import test from 'ava';
import { createLocalUser } from '../../src/auth/service.ts';
import { EXAMPLE_ID, EXAMPLE_WEBHOOK_URL } from '../../src/http/example-ids.ts';
import type { AnyRoute } from '../../src/http/route.ts';
import { allRoutes } from '../../src/web/routes.ts';
import { sessionCookie, type JsonResponse } from '../helpers/http.ts';
import { FuzzHarness } from '../security/fuzz-harness.ts';
import { existingParam, fillPath, pathParamNames, routeName } from '../security/world.ts';

type Parameter = { name: string; in: string; required?: boolean; example?: unknown };
type Operation = { parameters: Parameter[]; requestBody?: { content: Record<string, { example?: unknown }> } };
type Document = { paths: Record<string, Record<string, Operation>> };

/** Operations whose path names the object that another operation's example created, and which one. */
const ON_CREATED: Record<string, { by: string; field: string }> = {
  'DELETE /api/products/:id': { by: 'POST /api/products', field: 'id' },
  'DELETE /api/customers/:id': { by: 'POST /api/customers', field: 'id' },
  'DELETE /api/api-keys/:id': { by: 'POST /api/api-keys', field: 'id' },
  'DELETE /api/billing/metrics/:id': { by: 'POST /api/billing/metrics', field: 'id' },
  'DELETE /api/licenses/:key': { by: 'POST /api/licenses', field: 'licenseKey' },
  'DELETE /api/billing/payment-methods/:id': { by: 'POST /api/billing/payment-methods', field: 'id' },
  'DELETE /api/billing/webhooks/endpoints/:id': { by: 'POST /api/billing/webhooks/endpoints', field: 'id' },
  // The example archives the plan, which the subscription examples still subscribe to.
  'PUT /api/billing/plans/:id': { by: 'POST /api/billing/plans', field: 'id' },
  // The example issues an invoice, so it needs a draft one: the one POST /api/billing/invoices's example made.
  'PUT /api/billing/invoices/:id': { by: 'POST /api/billing/invoices', field: 'id' },
  // The example archives the rate, which the world's other examples (customers, plans, invoices) still name.
  'PUT /api/billing/tax-rates/:id': { by: 'POST /api/billing/tax-rates', field: 'id' },
  // The world's clock is advancing after the advance example; the example's own clock is deleted.
  'DELETE /api/billing/test-clocks/:id': { by: 'POST /api/billing/test-clocks', field: 'id' },
};

const successStatuses = (route: AnyRoute) =>
  Object.keys(route.responses)
    .map(Number)
    .filter((s) => s >= 200 && s < 300);

test(
  'every operation answers its example request with a ' + 'documented success status and a body its schema accepts',
  async (t) => {
    t.timeout(180_000);
    const h = await FuzzHarness.start();
    t.teardown(() => h.close());
    const { world, app } = h;
    const document = (await (await fetch(`${app.baseUrl}/api/openapi.json`)).json()) as Document;
    const a = world.a;
    const created = new Map<string, Record<string, unknown>>();

    // The login example's user exists, so the example logs in as written.
    const loginRoute = allRoutes.find((r) => routeName(r) === 'POST /api/auth/login')!;
    const login = document.paths['/api/auth/login']!.post!.requestBody!.content['application/json']!.example as {
      email: string;
      password: string;
    };
    await createLocalUser(app.db, { ...login, role: 'admin' });
    let loggedIn: JsonResponse | undefined;

    /** Each placeholder and what it stands for in this run. */
    async function placeholders(route: AnyRoute): Promise<[string, string][]> {
      const providerEvent = await app.db('provider_events').first('id');
      const real: Record<keyof typeof EXAMPLE_ID, string | undefined> = {
        customer: a.customerId,
        product: a.productId,
        plan: a.planId,
        otherPlan: world.b.planId,
        subscription: a.subscriptionId,
        // Checkout needs an invoice with an amount due that no other example pays.
        invoice: route.path.startsWith('/api/billing/checkout/') ? a.payableInvoiceId : a.invoiceId,
        payment: a.paymentId,
        paymentMethod: a.paymentMethodId,
        endpoint: world.endpointId,
        delivery: world.deliveryId,
        providerEvent: providerEvent?.id,
        apiKey: a.apiKeyId,
        taxRate: world.taxRateId,
        licenseKey: a.licenseKey,
        deviceId: a.deviceId,
        metric: world.metricId,
        charge: undefined,
      };
      const pairs = Object.entries(real).map(
        ([kind, value]) => [EXAMPLE_ID[kind as keyof typeof EXAMPLE_ID], value ?? 'missing'] as [string, string],
      );
      return [...pairs, [EXAMPLE_WEBHOOK_URL, 'http://127.0.0.1:9/example-endpoint']];
    }

    const substitute = (text: string, pairs: [string, string][]) =>
      pairs.reduce((out, [from, to]) => out.split(from).join(to), text);

    async function pathOf(route: AnyRoute): Promise<string> {
      const uses = ON_CREATED[routeName(route)];
      const values: Record<string, string> = {};
      for (const name of pathParamNames(route)) {
        const fromWorld =
          existingParam(route, name, world, a) ??
          (name === 'id' && route.path.includes('provider-events')
            ? (await app.db('provider_events').first('id'))?.id
            : undefined);
        values[name] =
          uses && name === pathParamNames(route)[0] ? String(created.get(uses.by)?.[uses.field]) : fromWorld;
      }
      return fillPath(route, values);
    }

    // Operations on an object of their own run after the operation that creates it.
    const ordered = [
      ...allRoutes.filter((r) => !ON_CREATED[routeName(r)]),
      ...allRoutes.filter((r) => ON_CREATED[routeName(r)]),
    ];
    let sent = 0;
    const problems: string[] = [];
    for (const route of ordered) {
      const operation = document.paths[route.path.replace(/:(\w+)/g, '{$1}')]![route.method]!;
      const pairs = await placeholders(route);
      const example = operation.requestBody?.content['application/json']?.example;
      const text = example === undefined ? undefined : substitute(JSON.stringify(example), pairs);
      const query = operation.parameters
        .filter((p) => p.in === 'query' && p.required)
        .map((p) => `${p.name}=${encodeURIComponent(substitute(String(p.example), pairs))}`);
      const path = `${await pathOf(route)}${query.length ? `?${query.join('&')}` : ''}`;
      // Logout is public, but it logs out the session the login example opened.
      const res = await h.send(
        route,
        path,
        text,
        routeName(route) === 'POST /api/auth/logout' ? { cookie: sessionCookie(loggedIn!) } : {},
      );
      if (route === loginRoute) loggedIn = res;
      sent += 1;
      const label = `${routeName(route)} (${path})`;
      if (!successStatuses(route).includes(res.status)) {
        problems.push(
          `${label} answered ${res.status} ${res.text.slice(0, 300)}; documented: ${successStatuses(route).join(', ')}`,
        );
        continue;
      }
      const parsed = route.responses[res.status]?.schema?.safeParse(res.body);
      if (parsed && !parsed.success)
        problems.push(`${label}: the answer does not match its documented schema: ${parsed.error.message}`);
      if (route.method === 'post' && res.body && typeof res.body === 'object')
        created.set(routeName(route), res.body as Record<string, unknown>);
    }
    t.deepEqual(problems, []);
    t.is(sent, allRoutes.length);
  },
);

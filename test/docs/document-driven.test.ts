/**
 * The document tells the whole truth, checked both ways (issue 19): requests generated from
 * /api/openapi.json alone (test/security/schema-arbitraries.ts, plain values, the world's ids) are sent to
 * the running service with their operation's credential.
 * - A request the document calls valid is never refused as `invalid_request` for a rule the document does
 *   not state. The few rules it states only in words (a description) are listed in STATED_IN_WORDS.
 * - The same request without one of its required body fields is refused with a 400.
 * - Every status answered is documented for the operation, and an error's code is in that status's enum.
 */
import test from 'ava';
import fc from 'fast-check';
import type { AnyRoute } from '../../src/http/route.ts';
import { allRoutes } from '../../src/web/routes.ts';
import { FuzzHarness } from '../security/fuzz-harness.ts';
import { conforming, serialise, type JsonSchema } from '../security/schema-arbitraries.ts';
import { fillPath, routeName } from '../security/world.ts';

// Requests per operation; about 2 minutes at 6. DOC_RUNS=50 for a longer look.
const RUNS = Number(process.env.DOC_RUNS ?? 5);

type Response = { content?: Record<string, { schema: JsonSchema & { anyOf?: JsonSchema[] } }> };
type Operation = {
  parameters: { name: string; in: string; required?: boolean; schema: JsonSchema }[];
  requestBody?: { content: Record<string, { schema: JsonSchema }> };
  responses: Record<string, Response>;
};
type Document = { paths: Record<string, Record<string, Operation>> };

/**
 * Refusals of a conforming request that the document states in a description rather than in a schema,
 * by operation and the field `details` names: rules about the world, not the shape of the value.
 */
const STATED_IN_WORDS: Record<string, string[]> = {
  // "Required when duration is repeating, and only then" (an if/then the generator does not follow).
  // ... and currency "Required with amountOff, and only then", expiresAt "In the future".
  'POST /api/billing/coupons': ['durationInCycles', 'currency', 'expiresAt'],
  // subscriptionId: "a subscription of this customer, billed in this currency" (the world's, not the value's shape).
  'POST /api/billing/invoices': ['currency', 'subscriptionId', 'taxRate', 'taxRateIds'],
  // "in increasing order, each once" and "needs its realm URL and client id" (issue 33: the keys are documented).
  'PUT /api/settings': ['billing.dunning_schedule_days', 'auth.provider', 'billing.default_tax_rate_ids'],
  // expiresAt "In the future" (the clock's, not the value's shape).
  'POST /api/api-keys': ['expiresAt'],
  // taxRateIds "at most one inclusive" (the rates' terms, not the ids' shape); taxId "needed with reverse".
  'PUT /api/billing/plans/:id': ['taxRateIds'],
  'POST /api/customers': ['taxRateIds', 'taxId'],
  'PUT /api/customers/:id': ['taxRateIds', 'taxId'],
  // "Refused: cannot be changed" (T-1).
  'PUT /api/billing/tax-rates/:id': ['percentage', 'inclusive'],
  // Issue 35 (U-3, U-4): basePrice "0" for usage plans; charges by pricing model; each charge's fields by its model,
  // its metric one that exists, once per plan; tiers ascending with the last open.
  'POST /api/billing/plans': [
    'taxRateIds',
    'basePrice',
    'charges',
    ...Array.from({ length: 20 }, (_, i) =>
      ['metricId', 'unitPrice', 'freeUnits', 'packageSize', 'packagePrice', 'tiers'].map((f) => `charges.${i}.${f}`),
    ).flat(),
  ],
  // U-1: field "required for every aggregation but count, refused for count".
  'POST /api/billing/metrics': ['field'],
  'PUT /api/billing/metrics/:id': ['field'],
  // U-9: periodStart "the start of the current or a billed period" (the subscription's, not the value's shape).
  'GET /api/v1/subscriptions/:id/usage': ['periodStart'],
  'GET /api/billing/subscriptions/:id/usage': ['periodStart'],
  // TC-3: frozenTime "at most 2 years after the clock's time" (the clock's, not the value's shape).
  'POST /api/billing/test-clocks/:id/advance': ['frozenTime'],
};

/** The codes the document lists under `status`, also beside a body of the operation's own (anyOf). */
function documentedCodes(operation: Operation, status: number): string[] | undefined {
  const schema = operation.responses[String(status)]?.content?.['application/json']?.schema;
  for (const candidate of schema?.anyOf ?? (schema ? [schema] : [])) {
    const codes = (candidate.properties?.error?.properties?.code as JsonSchema | undefined)?.enum;
    if (codes) return codes as string[];
  }
  return undefined;
}

test(
  'requests generated from the document get documented answers, ' + 'and conforming ones are not refused as invalid',
  async (t) => {
    t.timeout(600_000);
    const h = await FuzzHarness.start();
    t.teardown(() => h.close());
    const document = (await (await fetch(`${h.app.baseUrl}/api/openapi.json`)).json()) as Document;
    const problems: string[] = [];
    let sent = 0;
    // Deletes last: they would take away what the other operations name.
    const ordered = [
      ...allRoutes.filter((r) => r.method !== 'delete'),
      ...allRoutes.filter((r) => r.method === 'delete'),
    ];

    async function send(
      route: AnyRoute,
      operation: Operation,
      path: string,
      body: unknown,
      conformingRequest: boolean,
    ): Promise<void> {
      const text = body === undefined ? undefined : serialise(body);
      const res = await h.send(route, path, text);
      sent += 1;
      const label =
        `${routeName(route)} ${path} ${text?.slice(0, 200) ?? ''} -> ` + `${res.status} ${res.text.slice(0, 200)}`;
      if (!operation.responses[String(res.status)]) problems.push(`undocumented status: ${label}`);
      const code = (res.body as { error?: { code?: string } } | undefined)?.error?.code;
      const codes = res.status >= 400 ? documentedCodes(operation, res.status) : undefined;
      if (code && codes && !codes.includes(code)) problems.push(`undocumented code: ${label}`);
      if (!conformingRequest) {
        if (res.status !== 400) problems.push(`a body without a required field was not refused: ${label}`);
        return;
      }
      if (code === 'invalid_request') {
        const paths = ((res.body as { error: { details?: { path: string }[] } }).error.details ?? []).map(
          (d) => d.path,
        );
        const stated = STATED_IN_WORDS[routeName(route)] ?? [];
        if (paths.length === 0 || paths.some((p) => !stated.includes(p)))
          problems.push(`a conforming request refused for a rule the document does not state: ${label}`);
      }
    }

    for (const route of ordered) {
      const operation = document.paths[route.path.replace(/:(\w+)/g, '{$1}')]![route.method]!;
      const bodySchema = operation.requestBody?.content['application/json']?.schema;
      const query = operation.parameters.filter((p) => p.in === 'query');
      const idFor = h.idsFor(route);
      const queryShape: JsonSchema = {
        type: 'object',
        properties: Object.fromEntries(query.map((p) => [p.name, p.schema])),
        required: query.filter((p) => p.required).map((p) => p.name),
      };
      const samples = fc.sample(
        fc.record({
          body: bodySchema ? conforming(bodySchema, { plain: true, idFor }) : fc.constant(undefined),
          query: conforming(queryShape, { plain: true, idFor }),
        }),
        { numRuns: RUNS, seed: 19 },
      );
      const path = fillPath(route, h.existingParams(route));
      for (const sample of samples) {
        const query = sample.query as Record<string, unknown>;
        // ?wait=true waits 5 minutes for a sweep that no worker runs here (test/lifecycle covers it).
        if (routeName(route) === 'POST /api/billing/cron/lifecycle') delete query.wait;
        const qs = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)])).toString();
        await send(route, operation, `${path}${qs ? `?${qs}` : ''}`, sample.body, true);
      }
      // The same body without each of its required fields in turn, for the operations that have a body.
      const first = samples[0]?.body as Record<string, unknown> | undefined;
      for (const field of bodySchema?.required ?? []) {
        if (!first || route.rawBody) break;
        const { [field]: _dropped, ...rest } = first;
        await send(route, operation, path, rest, false);
      }
    }
    t.deepEqual(problems, []);
    t.true(sent > allRoutes.length * RUNS, `only ${sent} requests`);
  },
);

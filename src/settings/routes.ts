import { defineRoute } from '../http/route.ts';
import { settingsBody, settingsResponse } from './schema.ts';
import { requireUsableTaxRates } from '../tax-rates/service.ts';
import { listSettings, updateSettings } from './service.ts';

const DEFAULT_RATES = 'billing.default_tax_rate_ids';

// deps.config carries the environment overrides (D-12), so they win over stored rows here too.
export const settingsRoutes = [
  defineRoute({
    method: 'get',
    path: '/api/settings',
    auth: 'admin',
    tag: 'Settings',
    summary: 'Read every setting (secrets shown as "********")',
    responses: { 200: { description: 'Settings by key', schema: settingsResponse } },
    errors: [],
    handler: async ({ deps }) => ({ body: await listSettings(deps.db, deps.config) }),
  }),
  defineRoute({
    method: 'put',
    path: '/api/settings',
    auth: 'admin',
    tag: 'Settings',
    summary: 'Change settings; only the given keys change, all or none',
    body: settingsBody,
    responses: {
      200: { description: 'Settings after the change', schema: settingsResponse },
      400: { description: 'unknown_setting, invalid_request' },
    },
    errors: ['unknown_setting', 'tax_rate_not_found', 'tax_rate_inactive'],
    unknownFieldCode: 'unknown_setting',
    handler: async ({ deps, body, actor }) => {
      // T-2: default rates must exist and be active when set, as a plan's or a customer's must.
      const rateIds = body[DEFAULT_RATES];
      if (Array.isArray(rateIds) && rateIds.every((id) => typeof id === 'string'))
        await requireUsableTaxRates(deps.db, rateIds, DEFAULT_RATES);
      return { body: await updateSettings(deps.db, body, deps.config, actor) };
    },
  }),
];

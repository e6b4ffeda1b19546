import { z } from 'zod';
import { idParams } from '../http/schemas.ts';
import { listReply } from '../http/list-reply.ts';
import { defineRoute } from '../http/route.ts';
import {
  createTaxRateBody,
  listTaxRatesQuery,
  serialiseTaxRate,
  taxRateResponse,
  updateTaxRateBody,
} from './schema.ts';
import { createTaxRate, getTaxRate, listTaxRates, updateTaxRate } from './service.ts';

const TAG = 'Tax rates';

export const taxRateRoutes = [
  defineRoute({
    method: 'post',
    path: '/api/billing/tax-rates',
    auth: 'admin',
    tag: TAG,
    summary: 'Create a tax rate (T-1): a name, a percentage, exclusive or inclusive; its terms never change',
    body: createTaxRateBody,
    responses: { 201: { description: 'Created', schema: taxRateResponse } },
    errors: [],
    handler: async ({ deps, body, actor }) => ({
      status: 201,
      body: serialiseTaxRate(await createTaxRate(deps.db, body, actor)),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/api/billing/tax-rates',
    auth: 'admin',
    tag: TAG,
    summary: 'List tax rates (active=true|false filters)',
    query: listTaxRatesQuery,
    responses: { 200: { description: 'Tax rates', schema: z.array(taxRateResponse) } },
    errors: [],
    handler: async ({ deps, query, ctx }) => {
      const { active, ...page } = query;
      return listReply(ctx, await listTaxRates(deps.db, page, { active }), serialiseTaxRate);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/billing/tax-rates/:id',
    auth: 'admin',
    tag: TAG,
    summary: 'Get a tax rate',
    params: idParams,
    responses: { 200: { description: 'The tax rate', schema: taxRateResponse } },
    errors: [],
    handler: async ({ deps, params }) => ({ body: serialiseTaxRate(await getTaxRate(deps.db, params.id)) }),
  }),
  defineRoute({
    method: 'put',
    path: '/api/billing/tax-rates/:id',
    auth: 'admin',
    tag: TAG,
    summary: 'Rename, describe or archive (active: false) a tax rate; percentage and inclusive are refused (T-1)',
    params: idParams,
    body: updateTaxRateBody,
    responses: { 200: { description: 'The tax rate', schema: taxRateResponse } },
    errors: [],
    handler: async ({ deps, params, body, actor }) => ({
      body: serialiseTaxRate(await updateTaxRate(deps.db, params.id, body, actor)),
    }),
  }),
];

import { z } from 'zod';
import { listReply } from '../http/list-reply.ts';
import { defineRoute } from '../http/route.ts';
import { idParams } from '../http/schemas.ts';
import { createPlanBody, listPlansQuery, planResponse, serialisePlan, updatePlanBody } from './schema.ts';
import { createPlan, getPlanWithCharges, listPlansWithCharges, updatePlan } from './service.ts';

const tag = 'Plans';

export const planRoutes = [
  defineRoute({
    method: 'post',
    path: '/api/billing/plans',
    auth: 'admin',
    tag,
    summary: 'Create a pricing plan: flat (base price), usage (charges) or hybrid (both; U-3)',
    body: createPlanBody,
    responses: {
      201: { description: 'Created', schema: planResponse },
      400: { description: 'invalid_request, invalid_amount, product_not_found' },
    },
    errors: ['product_not_found', 'invalid_amount', 'tax_rate_not_found', 'tax_rate_inactive'],
    handler: async ({ deps, body, actor }) => ({
      status: 201,
      body: serialisePlan(await createPlan(deps.db, body, actor)),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/api/billing/plans',
    auth: 'admin',
    tag,
    summary: 'List plans, optionally by product and active flag',
    query: listPlansQuery,
    responses: { 200: { description: 'Plans', schema: z.array(planResponse) } },
    errors: [],
    handler: async ({ deps, query, ctx }) =>
      listReply(ctx, await listPlansWithCharges(deps.db, query, query), serialisePlan),
  }),
  defineRoute({
    method: 'get',
    path: '/api/billing/plans/:id',
    auth: 'admin',
    tag,
    summary: 'Read one plan',
    params: idParams,
    responses: { 200: { description: 'Plan', schema: planResponse }, 404: { description: 'not_found' } },
    errors: [],
    handler: async ({ deps, params }) => ({ body: serialisePlan(await getPlanWithCharges(deps.db, params.id)) }),
  }),
  defineRoute({
    method: 'put',
    path: '/api/billing/plans/:id',
    auth: 'admin',
    tag,
    summary: "Rename or (de)activate a plan, or change its next invoices' tax rates; prices never change",
    params: idParams,
    body: updatePlanBody,
    responses: { 200: { description: 'Plan', schema: planResponse }, 404: { description: 'not_found' } },
    errors: ['tax_rate_not_found', 'tax_rate_inactive'],
    handler: async ({ deps, params, body, actor }) => ({
      body: serialisePlan(await updatePlan(deps.db, params.id, body, actor)),
    }),
  }),
];

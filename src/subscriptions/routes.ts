import { z } from 'zod';
import { listReply } from '../http/list-reply.ts';
import { defineRoute } from '../http/route.ts';
import { idParams } from '../http/schemas.ts';
import { changePlan } from './change-plan.ts';
import {
  changePlanBody,
  createSubscriptionBody,
  listSubscriptionsQuery,
  serialiseSubscription,
  subscriptionResponse,
  updateSubscriptionBody,
} from './schema.ts';
import { createSubscription, getSubscription, listSubscriptions, updateSubscription } from './service.ts';

const tag = 'Subscriptions';

export const subscriptionRoutes = [
  defineRoute({
    method: 'get',
    path: '/api/billing/subscriptions',
    auth: 'admin',
    tag,
    summary: 'List subscriptions, optionally by customer, plan or status',
    query: listSubscriptionsQuery,
    responses: { 200: { description: 'Subscriptions', schema: z.array(subscriptionResponse) } },
    errors: [],
    handler: async ({ deps, query, ctx }) =>
      listReply(ctx, await listSubscriptions(deps.db, query, query), serialiseSubscription),
  }),
  defineRoute({
    method: 'post',
    path: '/api/billing/subscriptions',
    auth: 'admin',
    tag,
    summary: 'Subscribe a customer to a plan; without a trial the first period is invoiced at once',
    body: createSubscriptionBody,
    responses: {
      201: { description: 'Created', schema: subscriptionResponse },
      400: {
        description:
          'invalid_request, customer_not_found, plan_not_found, plan_inactive, billing_cycle_mismatch, invalid_coupon',
      },
    },
    errors: ['customer_not_found', 'plan_not_found', 'plan_inactive', 'billing_cycle_mismatch', 'invalid_coupon'],
    handler: async ({ deps, body, actor }) => ({
      status: 201,
      body: serialiseSubscription(await createSubscription(deps.db, body, actor, { settings: deps.config })),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/api/billing/subscriptions/:id',
    auth: 'admin',
    tag,
    summary: 'Read one subscription',
    params: idParams,
    responses: {
      200: { description: 'Subscription', schema: subscriptionResponse },
      404: { description: 'not_found' },
    },
    errors: [],
    handler: async ({ deps, params }) => ({ body: serialiseSubscription(await getSubscription(deps.db, params.id)) }),
  }),
  defineRoute({
    method: 'put',
    path: '/api/billing/subscriptions/:id',
    auth: 'admin',
    tag,
    summary: 'Pause, resume (active), cancel, or schedule cancellation at period end',
    params: idParams,
    body: updateSubscriptionBody,
    responses: {
      200: { description: 'Subscription', schema: subscriptionResponse },
      404: { description: 'not_found' },
      409: { description: 'subscription_canceled' },
    },
    errors: ['subscription_canceled'],
    handler: async ({ deps, params, body, actor }) => ({
      body: serialiseSubscription(await updateSubscription(deps.db, params.id, body, actor, { settings: deps.config })),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/api/billing/subscriptions/:id/change-plan',
    auth: 'admin',
    tag,
    summary:
      'Replace the plan, prorated by seconds unless prorate is false; ' +
      "prorationDate (within the last hour) prorates from a preview's instant",
    params: idParams,
    body: changePlanBody,
    responses: {
      200: { description: 'Subscription', schema: subscriptionResponse },
      400: { description: 'invalid_request, plan_not_found, plan_inactive, same_plan, currency_mismatch' },
      404: { description: 'not_found' },
      409: { description: 'subscription_canceled' },
    },
    errors: ['plan_not_found', 'plan_inactive', 'same_plan', 'currency_mismatch', 'subscription_canceled'],
    handler: async ({ deps, params, body, actor }) => ({
      body: serialiseSubscription(await changePlan(deps.db, params.id, body, actor, { settings: deps.config })),
    }),
  }),
];

import { z } from 'zod';
import { listReply } from '../http/list-reply.ts';
import { defineRoute } from '../http/route.ts';
import { couponResponse, createCouponBody, listCouponsQuery, serialiseCoupon } from './schema.ts';
import { createCoupon, listCoupons } from './service.ts';

export const couponRoutes = [
  defineRoute({
    method: 'post',
    path: '/api/billing/coupons',
    auth: 'admin',
    tag: 'Coupons',
    summary: 'Create a coupon: percentOff or amountOff + currency; duration once, repeating or forever',
    body: createCouponBody,
    responses: { 201: { description: 'Created', schema: couponResponse }, 409: { description: 'coupon_code_taken' } },
    errors: ['coupon_code_taken', 'invalid_amount'],
    handler: async ({ deps, body, actor }) => ({
      status: 201,
      body: serialiseCoupon(await createCoupon(deps.db, body, actor)),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/api/billing/coupons',
    auth: 'admin',
    tag: 'Coupons',
    summary: 'List coupons',
    query: listCouponsQuery,
    responses: { 200: { description: 'Coupons', schema: z.array(couponResponse) } },
    errors: [],
    handler: async ({ deps, query, ctx }) => listReply(ctx, await listCoupons(deps.db, query), serialiseCoupon),
  }),
];

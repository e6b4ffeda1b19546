/** The demo catalog: four products, their plans (monthly, quarterly, yearly; one in EUR) and two coupons. */
import { SYSTEM_ACTOR } from '../actor.ts';
import { createCoupon } from '../coupons/service.ts';
import { createCouponBody } from '../coupons/schema.ts';
import type { Db } from '../db/knex.ts';
import type { PlanRow } from '../plans/repo.ts';
import { createPlanBody } from '../plans/schema.ts';
import { createPlan } from '../plans/service.ts';
import { createProductBody } from '../products/schema.ts';
import { createProduct } from '../products/service.ts';

/** Plans by a short key the story refers to. */
export type PlanKey =
  | 'syncStarter'
  | 'syncTeam'
  | 'syncTeamQuarterly'
  | 'syncTeamYearly'
  | 'syncBusinessYearly'
  | 'syncTeamEur'
  | 'studioMonthly'
  | 'studioYearly'
  | 'apiMonthly'
  | 'apiQuarterly'
  | 'supportYearly';

export interface Catalog {
  plans: Record<PlanKey, PlanRow>;
  /** The licensed product: its subscribers get license keys. */
  licensedProductId: string;
  coupons: { percent: string; amount: string };
}

const PRODUCTS = {
  sync: { name: 'Cloud Sync', productType: 'saas', price: '29.00', description: 'File sync and sharing for teams.' },
  studio: {
    name: 'Desktop Studio',
    productType: 'licensed',
    price: '19.00',
    description: 'The desktop editor, licensed per seat with device activation.',
  },
  api: {
    name: 'Render API',
    productType: 'api',
    price: '49.00',
    description: 'Document rendering over HTTP, billed per plan.',
  },
  support: {
    name: 'Priority Support',
    productType: 'saas',
    price: '1200.00',
    description: 'A named engineer and a four-hour response time.',
  },
} as const;

const PLANS: Record<
  PlanKey,
  {
    product: keyof typeof PRODUCTS;
    name: string;
    cycle: 'monthly' | 'quarterly' | 'yearly';
    price: string;
    currency: string;
  }
> = {
  syncStarter: { product: 'sync', name: 'Starter', cycle: 'monthly', price: '29.00', currency: 'USD' },
  syncTeam: { product: 'sync', name: 'Team', cycle: 'monthly', price: '99.00', currency: 'USD' },
  syncTeamQuarterly: {
    product: 'sync',
    name: 'Team (quarterly)',
    cycle: 'quarterly',
    price: '279.00',
    currency: 'USD',
  },
  syncTeamYearly: { product: 'sync', name: 'Team (yearly)', cycle: 'yearly', price: '990.00', currency: 'USD' },
  syncBusinessYearly: {
    product: 'sync',
    name: 'Business (yearly)',
    cycle: 'yearly',
    price: '2400.00',
    currency: 'USD',
  },
  syncTeamEur: { product: 'sync', name: 'Team (EUR)', cycle: 'monthly', price: '89.00', currency: 'EUR' },
  studioMonthly: { product: 'studio', name: 'Studio', cycle: 'monthly', price: '19.00', currency: 'USD' },
  studioYearly: { product: 'studio', name: 'Studio (yearly)', cycle: 'yearly', price: '190.00', currency: 'USD' },
  apiMonthly: { product: 'api', name: 'API Growth', cycle: 'monthly', price: '49.00', currency: 'USD' },
  apiQuarterly: {
    product: 'api',
    name: 'API Growth (quarterly)',
    cycle: 'quarterly',
    price: '135.00',
    currency: 'USD',
  },
  supportYearly: { product: 'support', name: 'Priority Support', cycle: 'yearly', price: '1200.00', currency: 'USD' },
};

export const COUPON_CODES = { percent: 'LAUNCH20', amount: 'WELCOME10' } as const;

export async function createCatalog(db: Db): Promise<Catalog> {
  const productIds = {} as Record<keyof typeof PRODUCTS, string>;
  for (const [key, product] of Object.entries(PRODUCTS) as [
    keyof typeof PRODUCTS,
    (typeof PRODUCTS)[keyof typeof PRODUCTS],
  ][]) {
    productIds[key] = (await createProduct(db, createProductBody.parse(product), SYSTEM_ACTOR)).id;
  }
  const plans = {} as Record<PlanKey, PlanRow>;
  for (const [key, plan] of Object.entries(PLANS) as [PlanKey, (typeof PLANS)[PlanKey]][]) {
    plans[key] = await createPlan(
      db,
      createPlanBody.parse({
        productId: productIds[plan.product],
        name: plan.name,
        pricingModel: 'flat',
        billingCycle: plan.cycle,
        basePrice: plan.price,
        currency: plan.currency,
      }),
      SYSTEM_ACTOR,
    );
  }
  // 20% off the first three invoices, and 10 USD off the first one.
  await createCoupon(
    db,
    createCouponBody.parse({
      code: COUPON_CODES.percent,
      percentOff: '20',
      duration: 'repeating',
      durationInCycles: 3,
    }),
    SYSTEM_ACTOR,
  );
  await createCoupon(
    db,
    createCouponBody.parse({ code: COUPON_CODES.amount, amountOff: '10.00', currency: 'USD', duration: 'once' }),
    SYSTEM_ACTOR,
  );
  return { plans, licensedProductId: productIds.studio, coupons: COUPON_CODES };
}

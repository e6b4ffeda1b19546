/**
 * The actions of a product's page (C-6): each turns its form into the API's JSON body, parses it with the API
 * route's schema and calls the same service with the signed-in admin as the actor (C-11).
 */
import { notFound } from '../../errors.ts';
import { parseOrThrow } from '../../http/validate.ts';
import { createPlanBody, updatePlanBody } from '../../plans/schema.ts';
import { createPlan, getPlan, updatePlan } from '../../plans/service.ts';
import { updateProductBody } from '../../products/schema.ts';
import { deleteProduct, getProduct, updateProduct } from '../../products/service.ts';
import { listField, typedField } from '../http/form.ts';
import { metricsByCode } from '../../metering/service.ts';
import { chargeCodes } from './plan-charges.tsx';
import { defineAction } from '../http/route.ts';
import { uuidParam } from '../http/params.ts';
import { PRODUCT_FORMS, productPage, productUrl } from './product-detail.tsx';
import { booleanField, planFields, productFields } from './products-parts.tsx';

/** `POST /admin/products/:id`: the API's PUT, the same schema and service; only what the form sends changes. */
export const editProductAction = defineAction({
  path: '/admin/products/:id',
  form: PRODUCT_FORMS.edit,
  page: productPage,
  async run({ deps, params, form, actor }) {
    const id = uuidParam(params.id, 'Product');
    await updateProduct(deps.db, id, parseOrThrow(updateProductBody, productFields(form), 'body'), actor);
    return { redirect: productUrl(id), notice: 'Product updated.' };
  },
});

/** Archive and unarchive: the API's PUT with `status` (D-20), as a button. */
function statusAction(verb: 'archive' | 'unarchive', status: 'archived' | 'active') {
  return defineAction({
    path: `/admin/products/:id/${verb}`,
    form: PRODUCT_FORMS[verb],
    page: productPage,
    async run({ deps, params, actor }) {
      const id = uuidParam(params.id, 'Product');
      const product = await updateProduct(deps.db, id, parseOrThrow(updateProductBody, { status }, 'body'), actor);
      return { redirect: productUrl(id), notice: `Product ${product.name} ${verb}d.` };
    },
  });
}

/** `POST /admin/products/:id/delete`: the API's DELETE; a product in use is refused (D-21, `product_in_use`). */
export const deleteProductAction = defineAction({
  path: '/admin/products/:id/delete',
  form: PRODUCT_FORMS.delete,
  page: productPage,
  async run({ deps, params, actor }) {
    const id = uuidParam(params.id, 'Product');
    const { name } = await getProduct(deps.db, id);
    await deleteProduct(deps.db, id, actor);
    return { redirect: '/admin/products', notice: `Product ${name} deleted.` };
  },
});

/** `POST /admin/products/:id/plans`: the API's `POST /api/billing/plans` for this product. */
export const createPlanAction = defineAction({
  path: '/admin/products/:id/plans',
  form: PRODUCT_FORMS.plan,
  page: productPage,
  async run({ deps, params, form, actor }) {
    const id = uuidParam(params.id, 'Product');
    const metrics = await metricsByCode(deps.db, chargeCodes(form));
    const ids = new Map([...metrics].map(([code, m]) => [code, m.id]));
    const plan = await createPlan(deps.db, parseOrThrow(createPlanBody, planFields(form, id, ids), 'body'), actor);
    return { redirect: `${productUrl(id)}#plans`, notice: `Plan ${plan.name} created.` };
  },
});

/** `POST /admin/products/:id/plans/:planId`: the API's `PUT /api/billing/plans/:id` (name, active, taxRateIds). */
export const editPlanAction = defineAction({
  path: '/admin/products/:id/plans/:planId',
  form: PRODUCT_FORMS.planEdit,
  page: productPage,
  async run({ deps, params, form, actor }) {
    const id = uuidParam(params.id, 'Product');
    const planId = uuidParam(params.planId, 'Plan');
    // Another product's plan is not on this page: the URL names nothing.
    if ((await getPlan(deps.db, planId)).product_id !== id) throw notFound('Plan');
    const body = parseOrThrow(
      updatePlanBody,
      {
        name: typedField(form, 'name'),
        active: booleanField(form, 'active'),
        taxRateIds: listField(form, 'taxRateIds'),
      },
      'body',
    );
    const plan = await updatePlan(deps.db, planId, body, actor);
    return { redirect: `${productUrl(id)}#plans`, notice: `Plan ${plan.name} saved.` };
  },
});

export const productDetailRoutes = [
  productPage,
  editProductAction,
  statusAction('archive', 'archived'),
  statusAction('unarchive', 'active'),
  deleteProductAction,
  createPlanAction,
  editPlanAction,
];

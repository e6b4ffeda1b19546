import { z } from 'zod';
import { listReply } from '../http/list-reply.ts';
import { defineRoute } from '../http/route.ts';
import { idParams, pageQuery } from '../http/schemas.ts';
import { createProductBody, productResponse, serialiseProduct, updateProductBody } from './schema.ts';
import { createProduct, deleteProduct, getProduct, listProducts, updateProduct } from './service.ts';

const tag = 'Products';

export const productRoutes = [
  defineRoute({
    method: 'get',
    path: '/api/products',
    auth: 'admin',
    tag,
    summary: 'List products in creation order',
    query: pageQuery,
    responses: { 200: { description: 'Products', schema: z.array(productResponse) } },
    errors: [],
    handler: async ({ deps, query, ctx }) => listReply(ctx, await listProducts(deps.db, query), serialiseProduct),
  }),
  defineRoute({
    method: 'get',
    path: '/api/products/:id',
    auth: 'admin',
    tag,
    summary: 'Read one product',
    params: idParams,
    responses: { 200: { description: 'The product', schema: productResponse }, 404: { description: 'not_found' } },
    errors: [],
    handler: async ({ deps, params }) => ({ body: serialiseProduct(await getProduct(deps.db, params.id)) }),
  }),
  defineRoute({
    method: 'post',
    path: '/api/products',
    auth: 'admin',
    tag,
    summary: 'Create a product; the usage metrics are derived and cannot be set',
    body: createProductBody,
    responses: {
      201: { description: 'Created', schema: productResponse },
      400: { description: 'invalid_request, invalid_amount' },
    },
    errors: ['invalid_amount'],
    handler: async ({ deps, body, actor }) => ({
      status: 201,
      body: serialiseProduct(await createProduct(deps.db, body, actor)),
    }),
  }),
  defineRoute({
    method: 'put',
    path: '/api/products/:id',
    auth: 'admin',
    tag,
    summary: 'Change the fields sent; the others stay as they are',
    params: idParams,
    body: updateProductBody,
    responses: {
      200: { description: 'The updated product', schema: productResponse },
      400: { description: 'invalid_request, invalid_amount' },
      404: { description: 'not_found' },
    },
    errors: ['invalid_amount'],
    handler: async ({ deps, params, body, actor }) => ({
      body: serialiseProduct(await updateProduct(deps.db, params.id, body, actor)),
    }),
  }),
  defineRoute({
    method: 'delete',
    path: '/api/products/:id',
    auth: 'admin',
    tag,
    summary: 'Delete a product that no plan, subscription or license uses (archive it otherwise)',
    params: idParams,
    responses: {
      204: { description: 'Deleted' },
      404: { description: 'not_found' },
      409: { description: 'product_in_use' },
    },
    errors: ['product_in_use'],
    handler: async ({ deps, params, actor }) => {
      await deleteProduct(deps.db, params.id, actor);
      return { status: 204 };
    },
  }),
];

import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';
import { AppError, notFound } from '../errors.ts';
import type { PageQuery } from '../http/schemas.ts';
import {
  deleteProductRow, findProductRow, insertProduct, listProductRows, lockProductRow, listProductsOfCustomers, productInUse, updateProductRow,
  type ProductRow, type ProductWrite,
} from './repo.ts';
import type { CreateProductInput, UpdateProductInput } from './schema.ts';
import { isForeignKeyViolation } from '../db/errors.ts';

/** A body's productId that names no product (D-2). */
export const productNotFound = (id: string, path = 'productId') =>
  new AppError('product_not_found', `Product ${id} does not exist`, { details: [{ path, message: 'no such product' }] });

/** Throws product_not_found unless the product exists (for other domains that take a productId). */
export async function assertProductExists(db: Db, id: string, path = 'productId'): Promise<void> {
  if (!(await findProductRow(db, id))) throw productNotFound(id, path);
}

const productInUseError = () =>
  new AppError('product_in_use', 'The product is used by plans, subscriptions or licenses; archive it instead (status "archived")');

/** Request fields to columns; absent fields stay absent so an update changes only what was sent. */
function toColumns(input: UpdateProductInput): ProductWrite {
  const columns: ProductWrite = {
    name: input.name,
    product_type: input.productType,
    description: input.description,
    price: input.price,
    currency: input.currency,
    status: input.status,
  };
  return Object.fromEntries(Object.entries(columns).filter(([, v]) => v !== undefined)) as ProductWrite;
}

export function createProduct(db: Db, input: CreateProductInput): Promise<ProductRow> {
  return insertProduct(db, toColumns(input));
}

export function listProducts(db: Db, page: PageQuery) {
  return listProductRows(db, page);
}

export async function getProduct(db: Db, id: string): Promise<ProductRow> {
  const row = await findProductRow(db, id);
  if (!row) throw notFound('Product');
  return row;
}

export async function updateProduct(db: Db, id: string, input: UpdateProductInput): Promise<ProductRow> {
  const changes = toColumns(input);
  const row = Object.keys(changes).length === 0 ? await findProductRow(db, id) : await updateProductRow(db, id, changes);
  if (!row) throw notFound('Product');
  return row;
}

/** D-21: a product still referenced is archived, not deleted. */
export async function deleteProduct(db: Db, id: string): Promise<void> {
  await inTransaction(db, async (trx) => {
    if (!(await lockProductRow(trx, id))) throw notFound('Product');
    if (await productInUse(trx, id)) throw productInUseError();
    try {
      await deleteProductRow(trx, id);
    } catch (error) {
      // A table that references products but is not in the in-use check (a later migration's) refuses through its foreign key.
      if (isForeignKeyViolation(error)) throw productInUseError();
      throw error;
    }
  });
}

/** The products of one customer's licenses and subscriptions (D-15, D-22). */
export function listProductsOfCustomer(db: Db, customerId: string): Promise<ProductRow[]> {
  return listProductsOfCustomers(db, [customerId]);
}

/** The products of each of these customers' licenses and subscriptions, with the customer each belongs to. */
export function listProductsOfCustomerIds(db: Db, customerIds: string[]) {
  return listProductsOfCustomers(db, customerIds);
}

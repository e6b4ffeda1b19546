import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';
import { AppError, notFound } from '../errors.ts';
import type { PageQuery } from '../db/paginate.ts';
import {
  deleteProductRow,
  findProductRow,
  insertProduct,
  listProductRows,
  lockProductRow,
  listProductsOfCustomers,
  productInUse,
  updateProductRow,
  type ProductRow,
  type ProductWrite,
} from './repo.ts';
import type { CreateProductInput, UpdateProductInput } from './schema.ts';
import { isForeignKeyViolation } from '../db/errors.ts';
import type { Actor } from '../actor.ts';
import { assertCurrencyPrecision } from '../money-input.ts';
import { DEFAULT_CURRENCY } from '../money.ts';
import { recordAudits } from '../audit/service.ts';

/** A body's productId that names no product (D-2). */
export const productNotFound = (id: string, path = 'productId') =>
  new AppError('product_not_found', `Product ${id} does not exist`, {
    details: [{ path, message: 'no such product' }],
  });

/** Throws product_not_found unless the product exists (for other domains that take a productId). */
export async function assertProductExists(db: Db, id: string, path = 'productId'): Promise<void> {
  if (!(await findProductRow(db, id))) throw productNotFound(id, path);
}

const productInUseError = () =>
  new AppError(
    'product_in_use',
    'The product is used by plans, subscriptions or licenses; archive it instead (status "archived")',
  );

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

/**
 * A product's fields as the audit log records them: what an admin can set. The usage metrics are derived
 * (D-20) and refreshed by a job, so they are never an admin's change.
 */
function audited(row: ProductRow): Record<string, unknown> {
  const { name, product_type, description, price, currency, status } = row;
  return { name, product_type, description, price, currency, status };
}

/** An update's action: archiving and unarchiving are named apart, as an admin reads the log for them. */
function updateAction(before: ProductRow, after: ProductRow): string {
  if (before.status !== after.status && after.status === 'archived') return 'product.archive';
  if (before.status === 'archived' && after.status !== 'archived') return 'product.unarchive';
  return 'product.update';
}

/** D-91: the price must be exact in the product's currency, the one sent or the one it has. */
function assertExactPrice(input: UpdateProductInput, before?: ProductRow): void {
  if (input.price === undefined && input.currency === undefined) return;
  const price = input.price ?? before!.price;
  assertCurrencyPrecision(
    price,
    input.currency ?? before?.currency ?? DEFAULT_CURRENCY,
    input.price === undefined ? 'currency' : 'price',
  );
}

export function createProduct(db: Db, input: CreateProductInput, actor: Actor): Promise<ProductRow> {
  assertExactPrice(input);
  return inTransaction(db, async (trx) => {
    const created = await insertProduct(trx, toColumns(input));
    await recordAudits(trx, actor, [
      {
        action: 'product.create',
        targetType: 'product',
        targetId: created.id,
        after: audited(created),
      },
    ]);
    return created;
  });
}

export function listProducts(db: Db, page: PageQuery) {
  return listProductRows(db, page);
}

export async function getProduct(db: Db, id: string): Promise<ProductRow> {
  const row = await findProductRow(db, id);
  if (!row) throw notFound('Product');
  return row;
}

/** Changes the fields sent; `status: "archived"` archives (D-20), recorded as `product.archive`. */
export async function updateProduct(db: Db, id: string, input: UpdateProductInput, actor: Actor): Promise<ProductRow> {
  const changes = toColumns(input);
  return inTransaction(db, async (trx) => {
    const before = await lockProductRow(trx, id);
    if (!before) throw notFound('Product');
    assertExactPrice(input, before);
    // An accepted update is an admin action even when it changes nothing: it is recorded (with no field).
    const after = Object.keys(changes).length === 0 ? before : (await updateProductRow(trx, id, changes))!;
    await recordAudits(trx, actor, [
      {
        action: updateAction(before, after),
        targetType: 'product',
        targetId: id,
        before: audited(before),
        after: audited(after),
      },
    ]);
    return after;
  });
}

/** D-21: a product still referenced is archived, not deleted. */
export async function deleteProduct(db: Db, id: string, actor: Actor): Promise<void> {
  await inTransaction(db, async (trx) => {
    const before = await lockProductRow(trx, id);
    if (!before) throw notFound('Product');
    if (await productInUse(trx, id)) throw productInUseError();
    try {
      await deleteProductRow(trx, id);
    } catch (error) {
      // A table that references products but is not in the in-use check (a later migration's) refuses through its
      // foreign key.
      if (isForeignKeyViolation(error)) throw productInUseError();
      throw error;
    }
    await recordAudits(trx, actor, [
      {
        action: 'product.delete',
        targetType: 'product',
        targetId: id,
        before: audited(before),
      },
    ]);
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

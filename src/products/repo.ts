import type { Db } from '../db/knex.ts';
import { queryPrepared, type PreparedStatement } from '../db/prepared.ts';
import { paginate, type Page, type PageQuery } from '../db/paginate.ts';

export interface ProductRow {
  id: string;
  name: string;
  product_type: string;
  description: string | null;
  /** NUMERIC, read as a string (money never becomes a JS number). */
  price: string;
  currency: string;
  status: string;
  monthly_revenue: string;
  active_users: number;
  daily_active_users: number;
  churn_rate: string;
  metrics_refreshed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** The columns a request may write; the metric columns are derived (D-20) and never among them. */
export interface ProductWrite {
  name?: string;
  product_type?: string;
  description?: string | null;
  price?: string;
  currency?: string;
  status?: string;
}

const COLUMNS = [
  'id',
  'name',
  'product_type',
  'description',
  'price',
  'currency',
  'status',
  'monthly_revenue',
  'active_users',
  'daily_active_users',
  'churn_rate',
  'metrics_refreshed_at',
  'created_at',
  'updated_at',
];
const qualified = (table: string) => COLUMNS.map((c) => `${table}.${c}`);

export async function insertProduct(db: Db, row: ProductWrite): Promise<ProductRow> {
  const [created] = await db('products').insert(row).returning(COLUMNS);
  return created as ProductRow;
}

export function listProductRows(db: Db, page: PageQuery): Promise<Page<ProductRow>> {
  return paginate<ProductRow>(db('products').select(COLUMNS), 'products', page);
}

// Prepared: the benchmarked admin read (figures in db/prepared.ts).
const FIND_PRODUCT: PreparedStatement = {
  name: 'products.find',
  text: `select ${COLUMNS.join(', ')} from products where id = $1`,
};

export async function findProductRow(db: Db, id: string): Promise<ProductRow | undefined> {
  const [row] = await queryPrepared<ProductRow>(db, FIND_PRODUCT, [id]);
  return row;
}

/** Applies `changes`; undefined when there is no such product. */
export async function updateProductRow(db: Db, id: string, changes: ProductWrite): Promise<ProductRow | undefined> {
  const [updated] = await db('products')
    .where({ id })
    .update({ ...changes, updated_at: db.fn.now() })
    .returning(COLUMNS);
  return updated as ProductRow | undefined;
}

/**
 * Locks the product row for the rest of the transaction and answers it (undefined when there is none), so
 * a change reads the state it replaces. Rows that reference it (plans, licenses) take a key-share lock on
 * it when inserted, so while the lock is held none can appear between the in-use check and the delete.
 */
export async function lockProductRow(db: Db, id: string): Promise<ProductRow | undefined> {
  return db('products').where({ id }).forUpdate().first(COLUMNS);
}

/** False when there is no such product. */
export async function deleteProductRow(db: Db, id: string): Promise<boolean> {
  return (await db('products').where({ id }).delete()) > 0;
}

/**
 * True when plans or licenses reference the product (D-21). Subscriptions reference a product only
 * through a plan, so the plans check covers them. Run it with the product row locked
 * (lockProductRow) so no reference can appear between this check and the delete.
 */
export async function productInUse(db: Db, productId: string): Promise<boolean> {
  const result = await db.raw<{ rows: { in_use: boolean }[] }>(
    `select exists (select 1 from plans where product_id = ?)
            or exists (select 1 from licenses where product_id = ?) as in_use`,
    [productId, productId],
  );
  return result.rows[0]?.in_use ?? false;
}

/** A product row with the customer it belongs to, for lists that span customers. */
export type CustomerProductRow = ProductRow & { customer_id: string };

/** The distinct products of the customers' licenses and of their subscriptions' plans (D-22), by product name. */
export async function listProductsOfCustomers(db: Db, customerIds: string[]): Promise<CustomerProductRow[]> {
  if (customerIds.length === 0) return [];
  // `union` (not `union all`) makes each (customer, product) pair distinct.
  const result = await db.raw<{ rows: CustomerProductRow[] }>(
    `select ${qualified('products').join(', ')}, link.customer_id
       from (select customer_id, product_id from licenses where customer_id = any(?::uuid[])
             union
             select s.customer_id, p.product_id from subscriptions s join plans p on p.id = s.plan_id
              where s.customer_id = any(?::uuid[])) as link
       join products on products.id = link.product_id
      order by link.customer_id, products.name, products.id`,
    [customerIds, customerIds],
  );
  return result.rows;
}

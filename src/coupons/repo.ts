import type { Db } from '../db/knex.ts';
import { paginate, type Page, type PageQuery } from '../db/paginate.ts';

export interface CouponRow {
  id: string;
  code: string;
  percent_off: string | null;
  amount_off: string | null;
  currency: string | null;
  duration: 'once' | 'repeating' | 'forever';
  duration_in_cycles: number | null;
  max_redemptions: number | null;
  times_redeemed: number;
  expires_at: Date | null;
  created_at: Date;
}

export const COUPON_CODE_INDEX = 'coupons_code_lower';

export async function insertCouponRow(
  db: Db,
  row: Omit<CouponRow, 'id' | 'times_redeemed' | 'created_at'>,
): Promise<CouponRow> {
  const [created] = await db('coupons').insert(row).returning('*');
  return created as CouponRow;
}

export function listCouponRows(db: Db, page: PageQuery): Promise<Page<CouponRow>> {
  return paginate<CouponRow>(db('coupons').select('*'), 'coupons', page);
}

export async function findCouponRow(db: Db, id: string): Promise<CouponRow | undefined> {
  return db('coupons').where({ id }).first();
}

/**
 * Counts one redemption of a usable code (case-insensitive, not expired, not exhausted) in one
 * conditional statement, so concurrent redemptions can never pass maxRedemptions.
 */
export async function redeemCouponRow(db: Db, code: string, at: Date): Promise<CouponRow | undefined> {
  const [row] = await db('coupons')
    .whereRaw('lower(code) = lower(?)', [code])
    .where((q) => q.whereNull('expires_at').orWhere('expires_at', '>', at))
    .where((q) => q.whereNull('max_redemptions').orWhereRaw('times_redeemed < max_redemptions'))
    .update({ times_redeemed: db.raw('times_redeemed + 1') })
    .returning('*');
  return row as CouponRow | undefined;
}

export async function findCouponRows(db: Db, ids: string[]): Promise<Map<string, CouponRow>> {
  const rows: CouponRow[] =
    ids.length === 0
      ? []
      : await db('coupons')
          .whereIn('id', [...new Set(ids)])
          .select('*');
  return new Map(rows.map((r) => [r.id, r]));
}

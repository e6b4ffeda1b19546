/** Helpers of the scale-out run (scale-out.test.ts): what it reads from worker logs, counts and seeds. */
import type { Knex } from 'knex';
import { periodBounds } from '../../src/subscriptions/periods.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { makePlan } from '../subscriptions/fixtures.ts';
import type { ServiceProcess, WebProcess } from './processes.ts';

export interface SweepLog {
  asOf: string;
  invoicesCreated: number;
}

/**
 * The log lines of a worker that this run judges by, read from now on (its kept output is only a tail): webhook
 * attempts it made, and the summary of each sweep it finished.
 */
export function watchWorkerLog(service: ServiceProcess) {
  const seen = { attempts: 0, sweeps: [] as SweepLog[] };
  let partial = '';
  service.child.stdout!.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      if (line.includes('"msg":"webhook attempt"')) seen.attempts += 1;
      if (line.includes('"msg":"lifecycle sweep done"')) seen.sweeps.push(JSON.parse(line) as SweepLog);
    }
  });
  return seen;
}

/** Active monthly subscriptions in their period 0 from `anchor`, as rows (their period 0 not invoiced). */
export async function seedSubscriptions(db: Knex, count: number, anchor: Date): Promise<string[]> {
  const plan = await makePlan(db, '19.00');
  const customers = await Promise.all(Array.from({ length: 20 }, () => insertCustomer(db)));
  const { start, end } = periodBounds(anchor, 'monthly', 0);
  const rows = Array.from({ length: count }, (_, i) => ({
    customer_id: customers[i % 20]!.id,
    plan_id: plan.id,
    status: 'active',
    billing_cycle: 'monthly',
    billing_anchor: anchor,
    period_number: 0,
    current_period_start: start,
    current_period_end: end,
    created_at: anchor,
  }));
  return db('subscriptions')
    .insert(rows)
    .returning('id')
    .then((r) => r.map((row: { id: string }) => row.id));
}

/** Requests per web process and kind, as the clients sent them. */
export class Traffic {
  readonly byPort = new Map<number, Record<string, number>>();
  count(web: WebProcess, kind: string): void {
    const row = this.byPort.get(web.port) ?? {};
    row[kind] = (row[kind] ?? 0) + 1;
    this.byPort.set(web.port, row);
  }
  describe(webs: WebProcess[]): string {
    return webs
      .map(
        (w, i) =>
          `web ${i + 1} (:${w.port}): ${Object.entries(this.byPort.get(w.port) ?? {})
            .map(([k, n]) => `${k} ${n}`)
            .join(', ')}`,
      )
      .join('\n');
  }
}

export const monthsFrom = (start: Date, months: number, extraDays: number) => {
  const d = new Date(start);
  d.setUTCMonth(d.getUTCMonth() + months);
  return new Date(d.getTime() + extraDays * 86_400_000);
};

/** The amount of a decimal string with two places in minor units, as provider_a sends it. */
export const minorUnits = (amount: string) => Number(/^\d+\.\d\d$/.test(amount) ? amount.replace('.', '') : NaN);

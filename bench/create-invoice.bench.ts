import { rotating, type Benchmark, type Fixtures } from './harness.ts';

/**
 * Invoice creation through the whole stack (issue 4): number, price, store the invoice, its lines and the
 * invoice.created event in one transaction, spread over the seeded customers. Every creation also takes
 * the row lock of the year's number counter (gapless numbering, D-50), so creations queue on that one row:
 * the write ceiling (one insert per transaction, no shared row) is an upper bound it cannot reach.
 */
/** Two invoice lines; `taxes` are the body's tax fields. */
function invoiceLoad(fixtures: Fixtures, taxes: Record<string, unknown>) {
  const nextCustomer = rotating(fixtures.customerIds);
  let n = 0;
  return {
    method: 'POST' as const,
    headers: { cookie: fixtures.cookie },
    next: () => ({
      path: '/api/billing/invoices',
      body: {
        customerId: nextCustomer(),
        ...taxes,
        lineItems: [
          { description: `Bench subscription ${++n}`, quantity: 1, unitPrice: '49.00' },
          { description: 'Bench extra seats', quantity: 3, unitPrice: '9.99' },
        ],
      },
    }),
    accept: (body: string) => body.includes('"invoiceNumber":"INV-'),
  };
}

export const createInvoice: Benchmark = {
  name: 'POST /api/billing/invoices',
  ceiling: 'write',
  // issue 32's aim for the plain core.
  aim: 0.15,
  load: (fixtures) => invoiceLoad(fixtures, { taxRate: '8.25' }),
};

/**
 * The same creation priced by two named tax rates (issue 38): the rates are read and each rate's tax computed;
 * the aim is within 10% of the creation above in the same run.
 */
export const createInvoiceTwoRates: Benchmark = {
  name: 'POST /api/billing/invoices (two tax rates)',
  ceiling: 'write',
  compareTo: { name: createInvoice.name, aim: 0.9 },
  load: (fixtures) => invoiceLoad(fixtures, { taxRateIds: fixtures.taxRateIds }),
};

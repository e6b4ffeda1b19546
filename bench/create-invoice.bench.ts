import { rotating, type Benchmark } from './harness.ts';

/**
 * Invoice creation through the whole stack (issue 4): number, price, store the invoice, its lines and the
 * invoice.created event in one transaction, spread over the seeded customers. Every creation also takes
 * the row lock of the year's number counter (gapless numbering, D-50), so creations queue on that one row:
 * the write ceiling (one insert per transaction, no shared row) is an upper bound it cannot reach.
 */
export const createInvoice: Benchmark = {
  name: 'POST /api/billing/invoices',
  ceiling: 'write',
  // issue 32's aim for the plain core.
  aim: 0.15,
  load: (fixtures) => {
    const nextCustomer = rotating(fixtures.customerIds);
    let n = 0;
    return {
      method: 'POST',
      headers: { cookie: fixtures.cookie },
      next: () => ({
        path: '/api/billing/invoices',
        body: {
          customerId: nextCustomer(),
          taxRate: '8.25',
          lineItems: [
            { description: `Bench subscription ${++n}`, quantity: 1, unitPrice: '49.00' },
            { description: 'Bench extra seats', quantity: 3, unitPrice: '9.99' },
          ],
        },
      }),
      accept: (body) => body.includes('"invoiceNumber":"INV-'),
    };
  },
};

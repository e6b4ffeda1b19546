import type { Knex } from 'knex';
import type { Page } from 'puppeteer';
import type { AppDeps } from '../../src/app-deps.ts';
import { csvLine } from '../../src/console/http/csv.ts';
import type { ConsoleExport } from '../../src/console/http/route.ts';
import { createInvoice } from '../../src/invoices/service.ts';
import { recordPayment } from '../../src/payments/service.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { SYSTEM_ACTOR } from '../../src/actor.ts';

export const line = (unitPrice: string, quantity = 1, description = 'Widget') => ({ description, quantity, unitPrice });

/** An invoice through the invoices service (issued unless said), optionally created at `at`. */
export async function invoiceFor(
  db: Knex,
  customerId: string,
  options: { unitPrice?: string; status?: 'draft' | 'issued'; at?: Date; currency?: string } = {},
) {
  const { invoice } = await createInvoice(
    db,
    {
      customerId,
      currency: options.currency ?? 'USD',
      status: options.status ?? 'issued',
      lineItems: [line(options.unitPrice ?? '100.00')],
    },
    SYSTEM_ACTOR,
    options.at ? { now: options.at } : {},
  );
  return invoice;
}

/** A customer of its own, so a test's filtered list shows only what the test made. */
export const customer = (db: Knex, name = 'Acme Ltd') => insertCustomer(db, { name });

export function payManually(
  db: Knex,
  invoiceId: string,
  amount: string,
  options: { at?: Date; method?: 'manual' | 'bank_transfer' | 'provider_a'; reference?: string } = {},
) {
  return recordPayment(
    db,
    { invoiceId, amount, paymentMethod: options.method ?? 'manual', providerReference: options.reference ?? null },
    SYSTEM_ACTOR,
    options.at ? { now: options.at } : {},
  );
}

/**
 * Submits the form posting to `action` with `values` (any other field keeps what the page put there), as a
 * browser would: the form may sit in a closed <details>, so it is filled and submitted through the DOM.
 */
export async function submitForm(page: Page, action: string, values: Record<string, string>): Promise<void> {
  await Promise.all([
    page.waitForNavigation(),
    page.evaluate(
      (action, values) => {
        const form = Array.from(document.querySelectorAll('form')).find((f) => f.getAttribute('action') === action);
        if (!form)
          throw new Error(
            `no form posting to ${action} on ${location.pathname}: ` +
              `${document.querySelector('h1')?.textContent ?? document.body.textContent?.slice(0, 300)}`,
          );
        for (const [name, value] of Object.entries(values)) {
          const input = form.elements.namedItem(name) as HTMLInputElement | HTMLSelectElement | null;
          if (!input) throw new Error(`no field ${name} in the form posting to ${action}`);
          input.value = value;
        }
        form.requestSubmit();
      },
      action,
      values,
    ),
  ]);
}

/** The value of a field of the form posting to `action`, as the page shows it. */
export function fieldValue(page: Page, action: string, name: string): Promise<string | undefined> {
  return page.evaluate(
    (action, name) => {
      const form = Array.from(document.querySelectorAll('form')).find((f) => f.getAttribute('action') === action);
      return (form?.elements.namedItem(name) as HTMLInputElement | null)?.value;
    },
    action,
    name,
  );
}

/** The page's text, whitespace collapsed. */
// biome-ignore lint/performance/useDomNodeTextContent: the text as shown; textContent adds hidden text, joins blocks
export const pageText = async (page: Page) => (await page.evaluate(() => document.body.innerText)).replace(/\s+/g, ' ');

/** A CSV answer as rows of cells (the exports quote only cells with commas, quotes or line breaks). */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i += 1;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(cell);
      cell = '';
    } else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i += 1;
    } else cell += ch;
  }
  if (cell !== '' || row.length > 0) {
    row.push(cell);
    rows.push(row);
  }
  return rows;
}

/** Fetches a console URL with the page's cookies (an export is a download, not a page). */
export function fetchText(page: Page, path: string): Promise<{ status: number; type: string; text: string }> {
  return page.evaluate(async (path) => {
    const res = await fetch(path);
    return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
  }, path);
}

/**
 * An export's CSV as its definition writes it (header, then every row through csvLine), with the query parsed
 * by its schema as the router does. The router's streaming of it is checked over HTTP apart.
 */
export async function exportCsv(route: ConsoleExport, deps: AppDeps, query: Record<string, string>): Promise<string> {
  const parsed = route.query ? route.query.parse(query) : {};
  let text = csvLine(route.header);
  for await (const row of route.rows({ deps, query: parsed })) text += csvLine(row);
  return text;
}

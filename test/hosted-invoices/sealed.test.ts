/**
 * H-1's tokens at rest: kept in the envelope of every secret, so the release step seals the ones stored before
 * ENCRYPTION_KEY was set, and the link answered stays the same.
 */
import test from 'ava';
import { keyringOf } from '../../src/crypto/envelope.ts';
import { hostedUrlOf, sealHostedLinkTokens } from '../../src/invoices/hosted-links.ts';
import { startTestApp } from '../helpers/app.ts';
import { adminCtx, makeInvoice } from '../payments/fixtures.ts';

test('a token stored before ENCRYPTION_KEY is sealed by the release step and answers the same link', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const c = await adminCtx(app);
  const invoice = await makeInvoice(c);
  const before = await app.db('hosted_invoice_links').where({ invoice_id: invoice.id }).first();
  t.true(invoice.hostedUrl.endsWith(`/i/${before.token}`), 'plaintext without a key, as every secret');
  const key = { ENCRYPTION_KEY: 'a-key-of-at-least-thirty-two-characters-0001' };
  t.is(await sealHostedLinkTokens(app.db, keyringOf(key)), 1);
  const after = await app.db('hosted_invoice_links').where({ invoice_id: invoice.id }).first();
  t.regex(after.token, /^v2\./);
  t.is(after.token_hash, before.token_hash);
  t.is(await hostedUrlOf(app.db, { ...app.deps.config, ...key }, invoice), invoice.hostedUrl);
  t.is(await sealHostedLinkTokens(app.db, keyringOf(key)), 0, 'nothing left to seal');
});

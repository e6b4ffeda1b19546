/**
 * The credits domain's reads. Its rules are in ledger.ts; granting a credit (which spends it on open invoices and
 * may end dunning) is a use case of settlement/.
 */
export { listCreditLedger } from './ledger.ts';

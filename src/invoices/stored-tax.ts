/** A tax entry as an invoice stores and answers it (T-5): amounts in the currency's output form. */
export interface StoredTax {
  taxRateId: string | null;
  name: string;
  percentage: string;
  inclusive: boolean;
  taxableAmount: string;
  amount: string;
}

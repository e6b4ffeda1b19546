/** Every benchmark `npm run bench` runs, in order. A new one is a small `*.bench.ts` file and a line here. */
import { createCustomer } from './create-customer.bench.ts';
import { getProduct } from './get-product.bench.ts';
import type { Benchmark } from './harness.ts';

export const benchmarks: Benchmark[] = [getProduct, createCustomer];

import { createCustomer } from './create-customer.bench.ts';
import { getProduct } from './get-product.bench.ts';
import type { Benchmark } from './harness.ts';
import { probeRead, probeWrite } from './zz-probe.bench.ts';
export const benchmarks: Benchmark[] = [getProduct, createCustomer, probeRead, probeWrite];

import type { Benchmark } from './harness.ts';
export const probeRead: Benchmark = { name: 'GET /api/settings (probe)', ceiling: 'select', load: (f) => ({ method: 'GET', headers: { cookie: f.cookie }, next: () => ({ path: '/api/settings' }) }) };
export const probeWrite: Benchmark = { name: 'PUT /api/settings (probe)', ceiling: 'write', load: (f) => { let n = 0; return { method: 'PUT', headers: { cookie: f.cookie }, next: () => ({ path: '/api/settings', body: { 'company.name': `Co ${++n}` } }) }; } };

import type { AnyRoute } from '../http/route.ts';

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const AUTH_LABEL = { admin: 'admin session', apiKey: 'API key', public: 'public', cron: 'cron secret', provider: 'provider signature' };

/** A self-contained HTML reference (no external scripts: the service may run without internet). */
export function renderDocsPage(routes: AnyRoute[]): string {
  const byTag = new Map<string, AnyRoute[]>();
  for (const r of routes) byTag.set(r.tag, [...(byTag.get(r.tag) ?? []), r]);
  const sections = [...byTag]
    .map(([tag, list]) => {
      const rows = list
        .map(
          (r) =>
            `<tr><td class="m ${r.method}">${r.method.toUpperCase()}</td><td><code>${escapeHtml(r.path)}</code></td><td>${AUTH_LABEL[r.auth]}</td><td>${escapeHtml(r.summary)}</td><td>${Object.keys(r.responses).join(', ')}</td></tr>`,
        )
        .join('');
      return `<h2>${escapeHtml(tag)}</h2><table><tr><th>Method</th><th>Path</th><th>Auth</th><th>What it does</th><th>Statuses</th></tr>${rows}</table>`;
    })
    .join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Billing service API</title>
<style>body{font:14px/1.5 system-ui,sans-serif;margin:2rem auto;max-width:1100px;color:#222}table{border-collapse:collapse;width:100%;margin-bottom:1.5rem}
td,th{border-bottom:1px solid #ddd;padding:.35rem .5rem;text-align:left;vertical-align:top}.m{font-weight:600}.get{color:#0a7}.post{color:#07c}.put{color:#c70}.delete{color:#c22}</style>
</head><body><h1>Billing service API</h1><p>Machine-readable: <a href="/api/openapi.json">/api/openapi.json</a> (OpenAPI 3.1). Errors answer
<code>{"error": {"code", "message", "details"}}</code>. POSTs of the admin and v1 APIs accept <code>Idempotency-Key</code>.</p>${sections}</body></html>`;
}

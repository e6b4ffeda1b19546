import type { AppError } from '../../errors.ts';

/** A page for a request that reached no page (unknown URL, a refused CSRF token, a non-admin account). */
export function ErrorPage({ error }: { error: AppError }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${error.code} · Billing console`}</title>
        <link rel="stylesheet" href="/admin/assets/console.css" />
      </head>
      <body>
        <main class="narrow">
          <h1>{error.message}</h1>
          <p><code>{error.code}</code></p>
          <p><a href="/admin">Back to the overview</a></p>
        </main>
      </body>
    </html>
  );
}

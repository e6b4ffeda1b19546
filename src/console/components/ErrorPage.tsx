import type { AppError } from '../../errors.ts';
import { Layout, sectionOf, type Viewer } from './Layout.tsx';

export interface ErrorPageProps {
  error: AppError;
  /** The signed-in admin: the page is then a console page like any other, with the navigation (C-3). */
  viewer?: Viewer;
  path: string;
  /** The query the page was asked for with, to show the value each refused filter was given. */
  query?: Record<string, unknown>;
  /** Set when the page refused its filters: the same page without them. */
  unfiltered?: string;
}

/** What went wrong: the service's message and code, each field or filter it names with why, and a way on. */
function ErrorBody({ error, query, unfiltered }: ErrorPageProps) {
  const given = (name: string) => (typeof query?.[name] === 'string' ? ` (given: "${query[name]}")` : '');
  return (
    <>
      <h1>{error.message}</h1>
      <p>
        <code>{error.code}</code>
      </p>
      {error.details?.length ? (
        <ul class="error-details">
          {error.details.map((d) => (
            <li>
              <code>{d.path}</code>
              {`${given(d.path)}: ${d.message}`}
            </li>
          ))}
        </ul>
      ) : null}
      {unfiltered ? (
        <p>
          <a href={unfiltered}>Show this list without filters</a>
        </p>
      ) : null}
      <p>
        <a href="/admin">Back to the overview</a>
      </p>
    </>
  );
}

/**
 * A page for a request that reached no page or was refused before it rendered (unknown URL or id, a filter
 * the page does not understand, a refused CSRF token). A signed-in admin gets it inside the console's layout;
 * anyone else (no session, another role) a bare page that shows no navigation.
 */
export function ErrorPage(props: ErrorPageProps) {
  if (props.viewer) {
    return (
      <Layout title={props.error.message} viewer={props.viewer} section={sectionOf(props.path)}>
        <ErrorBody {...props} />
      </Layout>
    );
  }
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${props.error.message} · Billing console`}</title>
        <link rel="stylesheet" href="/admin/assets/console.css" />
      </head>
      <body>
        <main class="narrow">
          <ErrorBody {...props} />
        </main>
      </body>
    </html>
  );
}

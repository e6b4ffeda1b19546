import type { AppError } from '../errors.ts';
import { PortalLayout, PublicLayout } from './layout.tsx';
import type { PortalViewer } from './viewer.ts';

const TITLES: Partial<Record<AppError['code'], string>> = {
  not_found: 'Not found',
  forbidden: 'Not available',
  rate_limited: 'Too many requests',
};

/** A refusal or a failure, inside the portal's layout for a signed-in customer, else on its own. */
export function ErrorPage({
  error,
  viewer,
  companyName,
}: {
  error: AppError;
  viewer: PortalViewer | undefined;
  companyName: string;
}) {
  const title = TITLES[error.code] ?? 'Something went wrong';
  const body = (
    <section class="card">
      <h1>{title}</h1>
      <p>
        {error.code === 'not_found' ? 'There is nothing here: the page or the record does not exist.' : error.message}
      </p>
      <p>
        <a href={viewer ? '/portal' : '/portal/login'}>{viewer ? 'Back to the overview' : 'Sign in'}</a>
      </p>
    </section>
  );
  return viewer ? (
    <PortalLayout title={title} viewer={viewer}>
      {body}
    </PortalLayout>
  ) : (
    <PublicLayout title={title} companyName={companyName}>
      {body}
    </PublicLayout>
  );
}

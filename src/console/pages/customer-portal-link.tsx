import { dateTime } from '../components/format.ts';
import { Form, type FormState } from '../components/Form.tsx';

export const PORTAL_LINK_FORM = 'portal-link';

export const portalLinkPath = (customerId: string) => `/admin/customers/${customerId}/portal-session`;

/**
 * The customer page's "Customer portal" button (issue 37): it makes a sign-in link (P-1, an hour, once) and the page
 * shows it once to copy, as a new API key is shown.
 */
export function PortalLinkSection({
  customerId,
  csrf,
  state,
  link,
}: {
  customerId: string;
  csrf: string;
  state?: FormState | undefined;
  link?: string | undefined;
}) {
  const [url, expiresAt] = link ? link.split(' ') : [];
  return (
    <div id="portal" class="portal-link">
      {url ? (
        <p class="reveal" role="status">
          {'Send this link to the customer; it signs them in once, until '}
          {dateTime(expiresAt)}: <code class="id">{url}</code>
        </p>
      ) : null}
      <Form
        name={PORTAL_LINK_FORM}
        action={portalLinkPath(customerId)}
        csrf={csrf}
        state={state}
        submit="Customer portal"
      >
        <p class="muted">A sign-in link to the customer's portal, valid for an hour and once.</p>
      </Form>
    </div>
  );
}

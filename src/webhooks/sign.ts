import { createHmac } from 'node:crypto';

/**
 * D-72 headers for one attempt: `X-Signature` over the body, and the Standard Webhooks trio over "id.timestamp.body".
 * During a rotation's grace period `previousSecret` signs too: `webhook-signature` then carries both signatures
 * (space-separated, as Standard Webhooks allows), the new one first; `X-Signature` is the new secret's only.
 */
export function signatureHeaders(
  secret: string,
  event: { id: string; type: string },
  body: string,
  timestampSeconds: number,
  previousSecret?: string | null,
): Record<string, string> {
  const standard = (key: string) => {
    const hmac = createHmac('sha256', Buffer.from(key, 'utf8'));
    return `v1,${hmac.update(`${event.id}.${timestampSeconds}.${body}`).digest('base64')}`;
  };
  return {
    'content-type': 'application/json',
    'x-signature': createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex'),
    'x-event-id': event.id,
    'x-event-type': event.type,
    'webhook-id': event.id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': previousSecret ? `${standard(secret)} ${standard(previousSecret)}` : standard(secret),
  };
}

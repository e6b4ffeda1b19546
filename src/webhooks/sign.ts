import { createHmac } from 'node:crypto';

/** D-72 headers for one attempt: `X-Signature` over the body, and the Standard Webhooks trio over "id.timestamp.body". */
export function signatureHeaders(
  secret: string,
  event: { id: string; type: string },
  body: string,
  timestampSeconds: number,
): Record<string, string> {
  const key = Buffer.from(secret, 'utf8');
  const standard = createHmac('sha256', key).update(`${event.id}.${timestampSeconds}.${body}`).digest('base64');
  return {
    'content-type': 'application/json',
    'x-signature': createHmac('sha256', key).update(body).digest('hex'),
    'x-event-id': event.id,
    'x-event-type': event.type,
    'webhook-id': event.id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': `v1,${standard}`,
  };
}

/** Every outbound event type the interface lists (interface.md, Events). */
export const EVENT_TYPES = [
  'subscription.created',
  'subscription.updated',
  'subscription.canceled',
  'invoice.created',
  'invoice.paid',
  'invoice.overdue',
  'payment.succeeded',
  'payment.failed',
  'license.created',
  'license.expired',
  'license.device_culled',
  'dunning.started',
  'dunning.resolved',
  'dunning.failed',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

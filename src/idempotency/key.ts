import { z } from 'zod';

/**
 * D-6: an Idempotency-Key is 1-255 printable ASCII characters, space excluded (a header's value is trimmed at its
 * ends, so a key with spaces would not be the key sent). The middleware checks it and the OpenAPI document states
 * it from this one schema (issue 33).
 */
export const idempotencyKey = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[\x21-\x7e]*$/);

export const IDEMPOTENCY_KEY_RULE = 'must be 1-255 printable ASCII characters';

import { z } from 'zod';
import { withoutControls } from '../http/schemas.ts';

export const loginBody = z
  .object({
    email: withoutControls(z.string()).trim().min(1, 'must not be empty').max(320),
    password: z.string().min(1, 'must not be empty').max(1024),
  })
  .meta({ examples: [{ email: 'admin@acme.example', password: 'correct horse battery staple' }] });

export const userResponse = z.object({ id: z.uuid(), email: z.string(), role: z.string() });
export const loginResponse = z.object({ user: userResponse }).meta({
  examples: [{ user: { id: 'f3162738-94a5-4b6c-937e-8f9001122334', email: 'admin@acme.example', role: 'admin' } }],
});

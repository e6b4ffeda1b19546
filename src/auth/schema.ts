import { z } from 'zod';
import { withoutControls } from '../http/schemas.ts';

export const loginBody = z.object({
  email: withoutControls(z.string()).trim().min(1, 'must not be empty').max(320),
  password: z.string().min(1, 'must not be empty').max(1024),
});

export const userResponse = z.object({ id: z.uuid(), email: z.string(), role: z.string() });
export const loginResponse = z.object({ user: userResponse });

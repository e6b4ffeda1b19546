import { z } from 'zod';

/** GET and PUT /api/settings: settings by key; the service validates each key and value (definitions.ts). */
export const settingsObject = z.record(z.string(), z.unknown());

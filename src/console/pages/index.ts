import type { ConsoleRoute } from '../http/route.ts';
import { customerRoutes } from './customers.tsx';
import { overviewRoutes } from './overview.tsx';

/** Every console page, export and action; login and logout are mounted apart (they need no session). */
export const consolePages: readonly ConsoleRoute[] = [...overviewRoutes, ...customerRoutes];

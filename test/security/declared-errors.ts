import type { AnyRoute } from '../../src/http/route.ts';
import { routeErrors } from '../../src/http/route-errors.ts';
import type { JsonResponse } from '../helpers/http.ts';
import { routeName } from './world.ts';

/**
 * What is wrong with an answer measured against the codes the route declares (src/http/route-errors.ts,
 * which the OpenAPI document publishes): an error code it does not declare. Undefined when the answer is
 * fine, and for answers that are not D-1 errors (a success, or D-33's own license_not_found body).
 */
export function undeclaredErrorProblem(route: AnyRoute, res: JsonResponse): string | undefined {
  const code = (res.body as { error?: { code?: unknown } } | undefined)?.error?.code;
  if (res.status < 400 || typeof code !== 'string') return undefined;
  const declared: string[] = routeErrors(route);
  if (declared.includes(code)) return undefined;
  return (
    `answered ${res.status} ${code}, which ${routeName(route)} does not declare (it declares ` +
    `${declared.join(', ')})`
  );
}

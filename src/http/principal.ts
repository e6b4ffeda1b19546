/** Who is calling, as established by the auth middleware. */
export type Principal =
  | { kind: 'anonymous' }
  | { kind: 'user'; userId: string; email: string; role: string; sessionId: string }
  | { kind: 'apiKey'; apiKeyId: string; customerId: string };

export function requireCustomerScope(principal: Principal): string {
  if (principal.kind !== 'apiKey') throw new Error('route expected an API key principal');
  return principal.customerId;
}

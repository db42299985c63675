/**
 * Roles and API-key scopes (the spec's scope table). The route table (api/routing.ts) names them in each
 * route's access rule; the API-key commands check them when a key is created.
 */
export type Role = 'admin' | 'employee';

export const ROLES: readonly Role[] = ['admin', 'employee'];

export const SCOPES = [
  'files:read',
  'files:write',
  'notifications:read',
  'mcp',
  'billing:read',
  'rules:write',
  'audit:read',
] as const;
export type Scope = (typeof SCOPES)[number];

/** Who may give each scope to a key (the spec's scope table). A key never does more than its owner may. */
export const SCOPE_GRANTORS: Readonly<Record<Scope, readonly Role[]>> = {
  'files:read': ['admin', 'employee'],
  'files:write': ['admin', 'employee'],
  'notifications:read': ['admin', 'employee'],
  mcp: ['admin', 'employee'],
  'billing:read': ['admin'],
  'rules:write': ['admin'],
  'audit:read': ['admin'],
};

export function mayHoldScope(role: Role, scope: Scope): boolean {
  return SCOPE_GRANTORS[scope].includes(role);
}

import type { Role, Scope } from '../routing';

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

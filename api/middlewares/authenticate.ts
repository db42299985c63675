import type { Knex } from 'knex';
import { ForbiddenError, UnauthorizedError } from '../../common/errors';
import { withholdClientAddress } from '../../common/requestContext';
import { effectiveScopes, noteKeyUse, sessionCaller } from '../../domain/identity/authentication';
import { isApiKeyToken } from '../../domain/identity/keyFormat';
import { UNAUTHENTICATED } from '../../domain/identity/signIn';
import { accessClaimsFor, bearerToken, verifiedKeyFor } from '../callers';
import type { AppContext, Principal } from '../context';
import type { Access, RouteMiddlewareFactory } from '../routing';
import { actingAs } from '../../db/unitOfWork';
import { countRequest } from '../../domain/analytics/requests';

/** Rule 7: one message for every reason a request is not authenticated (the identity domain's). */
export { UNAUTHENTICATED };

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The authenticated caller, and its company's status for the 403 that follows. */
interface Authenticated {
  principal: Principal;
  companyStatus: string;
}

async function sessionPrincipal(ctx: AppContext, knex: Knex, token: string): Promise<Authenticated> {
  // verified once per request, shared with the request budget's caller identification (api/callers.ts)
  const claims = await accessClaimsFor(ctx, token);
  if (!claims) throw new UnauthorizedError(UNAUTHENTICATED);
  // person, role, person status and company status are read afresh on every request
  const row = await sessionCaller(knex, claims);
  if (!row || row.personStatus !== 'active') throw new UnauthorizedError(UNAUTHENTICATED);
  const principal: Principal = {
    kind: 'session',
    personId: row.personId,
    companyId: row.companyId,
    role: row.role,
    companyPlan: row.plan,
    demo: row.demo,
    sessionId: claims.sessionId,
  };
  return { principal, companyStatus: row.companyStatus };
}

async function keyPrincipal(ctx: AppContext, knex: Knex, token: string): Promise<Authenticated> {
  // verified once per request, shared with the request budget's caller identification (api/callers.ts)
  const row = await verifiedKeyFor(ctx, token);
  if (!row || row.personStatus !== 'active') throw new UnauthorizedError(UNAUTHENTICATED);
  await noteKeyUse(knex, row);
  const principal: Principal = {
    kind: 'key',
    personId: row.personId,
    companyId: row.companyId,
    role: row.role,
    companyPlan: row.plan,
    demo: false,
    apiKeyId: row.apiKeyId,
    scopes: effectiveScopes(row),
  };
  return { principal, companyStatus: row.companyStatus };
}

/**
 * The route table's access rule for an authenticated caller: the key's scope, the role, the read-only demo
 * (403 with the reason). `method` is the route's HTTP method. The AI-agent tools (api/mcp/tools.ts) decide
 * with this too, from the access rule of the REST route each tool stands for.
 */
export function authorize(
  access: Exclude<Access, { public: true }>,
  principal: Principal,
  method: string,
): void {
  if (principal.kind === 'key') {
    if (!access.keyScope) throw new ForbiddenError('API keys are not accepted on this endpoint');
    if (!principal.scopes?.includes(access.keyScope)) {
      throw new ForbiddenError(`the API key lacks the scope ${access.keyScope}`);
    }
  }
  if (!access.roles.includes(principal.role)) throw new ForbiddenError('your role does not allow this');
  if (principal.demo && !READ_METHODS.has(method.toUpperCase()) && !access.demoAllowed)
    throw new ForbiddenError('the demo is read-only');
}

/** Whether `authorize` lets the caller through (the AI-agent tool list). */
export function isAuthorized(
  access: Exclude<Access, { public: true }>,
  principal: Principal,
  method: string,
): boolean {
  try {
    authorize(access, principal, method);
    return true;
  } catch {
    return false;
  }
}

/**
 * Authenticates the caller and enforces the route's `access` rule (api/routes: the route table):
 * 401 for every authentication failure (one message), 403 only for role, scope, suspended company,
 * keys on a route that does not accept them, and writes in the read-only demo.
 */
export const authenticate: RouteMiddlewareFactory = (spec) => {
  const access = spec.access;
  return async (ctx, next) => {
    // a public route acts as its named system task, or as no one (no tenant row visible)
    if (access.public) return access.system ? actingAs({ system: access.system }, next) : next();
    const token = bearerToken(ctx);
    if (!token) throw new UnauthorizedError(UNAUTHENTICATED);
    const { knex } = ctx.deps;
    const { principal, companyStatus } = await (isApiKeyToken(token)
      ? keyPrincipal(ctx, knex, token)
      : sessionPrincipal(ctx, knex, token));

    // analytics: every authenticated request, per person and key (README "Analytics"); never fails the request
    countRequest(knex, principal, (err: unknown) =>
      ctx.state.log.warn({ err }, 'requests not yet counted for analytics (kept for the next write)'),
    );
    if (companyStatus !== 'active') throw new ForbiddenError('the company is suspended');
    authorize(access, principal, ctx.method);

    ctx.state.auth = principal;
    // a demo visitor's records carry no client address (every visitor reads the demo company's audit log)
    if (principal.demo) withholdClientAddress();
    // the request's units of work (db/unitOfWork.ts) act for the principal's company
    return actingAs({ companyId: principal.companyId }, next);
  };
};

/** The caller of a non-public route (set by `authenticate`). */
export function principalOf(ctx: AppContext): Principal {
  if (!ctx.state.auth) throw new UnauthorizedError(UNAUTHENTICATED);
  return ctx.state.auth;
}

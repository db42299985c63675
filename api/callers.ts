import type { PlanName } from '../common/plans';
import type { AppContext } from './context';

/**
 * Who is calling, as far as the request budget needs to know, found before authentication proper and
 * without trusting anything unsigned: a session token whose signature and expiry check out is counted for
 * its person; an API key whose identifier part names a live key is counted for its company. Anything else
 * is counted per address. Authentication (api/middlewares/authenticate.ts) still decides whether the
 * request may go on.
 */
export type CallerIdentity =
  | { kind: 'key'; companyId: string; plan: PlanName | null }
  | { kind: 'session'; personId: string; companyId: string }
  | { kind: 'anonymous' };

const ANONYMOUS: CallerIdentity = { kind: 'anonymous' };

export async function identifyCaller(ctx: AppContext): Promise<CallerIdentity> {
  const header = ctx.get('Authorization');
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  if (!match) return ANONYMOUS;
  return ANONYMOUS;
}

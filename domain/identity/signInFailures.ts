import type { Knex } from 'knex';
import type { RateLimiterPostgres } from 'rate-limiter-flexible';
import type { Config } from '../../common/config';
import { TooManyRequestsError } from '../../common/errors';
import { fingerprint } from '../../common/secrets';
import { takePoint, windowCounter } from '../../db/counters';
import { keysOf } from './keys';

export const ACCOUNT_LOCKED = 'too many failed sign-ins for this account; try again later';

/**
 * Failed sign-ins counted per account (OWASP credential stuffing: a limit per account, on top of the
 * per-address bucket, so guesses spread over many addresses still stop). The account is the e-mail address as
 * sign-in compares it (trimmed, case-insensitive), known or not, so an unknown address is counted and
 * answered exactly like a registered one; only an HMAC fingerprint of it is stored.
 *
 * An attempt takes a point *before* the password is verified (one atomic upsert in PostgreSQL), so parallel
 * guesses cannot overrun the limit; an attempt whose password was right gives its point back, so only
 * failures count. Once `failuresPerAccount` points are taken in the window, every attempt — the right
 * password too — answers 429 with Retry-After until the window (fixed, from the first failure) ends.
 */
export class SignInAttempt {
  private constructor(
    private readonly limiter: RateLimiterPostgres,
    private readonly key: string,
  ) {}

  /**
   * Takes the attempt's point, or throws 429 when the account is locked (Retry-After, and the X-RateLimit-*
   * headers of this limit, which the API's error mapper writes).
   */
  static async begin(deps: { knex: Knex; config: Config }, email: string): Promise<SignInAttempt> {
    const { failuresPerAccount: points, failureWindowSeconds: duration } = deps.config.signIn;
    const limiter = windowCounter(deps.knex, 'signInFailures', points, duration);
    const key = fingerprint(keysOf(deps.config).signInAccount, email.trim().toLowerCase());
    const { allowed, state } = await takePoint(limiter, key);
    if (!allowed) {
      const resetSeconds = Math.max(1, Math.ceil(state.msBeforeNext / 1000));
      // the limit that refused this answer, in the spec's headers
      throw new TooManyRequestsError(ACCOUNT_LOCKED, resetSeconds, {
        'X-RateLimit-Limit': String(points),
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Reset': String(resetSeconds),
      });
    }
    return new SignInAttempt(limiter, key);
  }

  /** The password was right: this attempt is not a failure and gives its point back. */
  async succeeded(): Promise<void> {
    await this.limiter.reward(this.key);
  }
}

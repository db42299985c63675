/**
 * Sign-in with Google through OpenID Connect (openid-client): authorization code with PKCE, state and nonce.
 *
 * 1. POST /auth/oauth/google/url stores a pending authorization (state fingerprint, PKCE verifier, nonce; 10
 *    minutes) and answers the provider address.
 * 2. The provider sends the browser back to GET /auth/oauth/google/callback; the pending authorization is
 *    consumed (once), the code is exchanged with the provider (PKCE verifier, state and nonce checked by the
 *    library), the verified address or the recorded subject picks the person, and the service issues its own
 *    one-time code (60 seconds, single use, bound to the state).
 * 3. POST /auth/oauth/exchange trades that code and the state for a token pair, once.
 */
import { randomUUID } from 'node:crypto';
import * as oidc from 'openid-client';
import type { Knex } from 'knex';
import type { Config } from '../../common/config';
import {
  AppError,
  BadRequestError,
  NotFoundError,
  ServiceUnavailableError,
  UnauthorizedError,
} from '../../common/errors';
import { constantTimeEqual, fingerprint } from '../../common/secrets';
import { recordAudit } from '../audit/record';
import {
  ACCOUNT_MESSAGES,
  personAccounts,
  personByEmail,
  refuseInactive,
  type PersonAccount,
} from './accountState';
import { consumeOneTimeToken, issueOneTimeToken, TOKEN_LIFETIME_SECONDS } from './oneTimeTokens';
import { keysOf } from './keys';
import type { RunUnitOfWork } from './deps';
import { startSession, type TokenPair } from './sessions';

export const PENDING_AUTHORIZATION_SECONDS = 600;
export const EXCHANGE_CODE_SECONDS = TOKEN_LIFETIME_SECONDS.oauth_exchange;
export const CALLBACK_PATH = '/auth/oauth/google/callback';
const SCOPE = 'openid email profile';
const DISCOVERY_TIMEOUT_SECONDS = 10;

export const MESSAGES = {
  notConfigured: 'Google sign-in is not enabled on this service',
  unreachable: 'the identity provider cannot be reached, try again later',
  badState: 'unknown, expired or already used sign-in state',
  notVerified: 'the sign-in with Google could not be verified',
  emailNotVerified: 'Google has not verified this e-mail address',
  noAccount: 'no account matches this Google sign-in',
  badCode: 'invalid or expired sign-in code',
  ...ACCOUNT_MESSAGES,
} as const;

export function redirectUri(config: Config): string {
  return new URL(CALLBACK_PATH, config.publicBaseUrl).toString();
}

// Discovery is one network round trip: done once per process and configuration. A failure is not cached.
const configurations = new Map<string, Promise<oidc.Configuration>>();

async function providerConfiguration(config: Config): Promise<oidc.Configuration> {
  const { issuer, clientId, clientSecret } = config.google;
  if (!clientId) throw new NotFoundError(MESSAGES.notConfigured);
  const key = JSON.stringify([issuer, clientId, clientSecret]);
  let pending = configurations.get(key);
  if (!pending) {
    // plain http is refused by the library unless allowed; config.ts refuses an http issuer in production
    const execute = new URL(issuer).protocol === 'http:' ? [oidc.allowInsecureRequests] : [];
    pending = oidc.discovery(new URL(issuer), clientId, clientSecret, undefined, {
      execute,
      timeout: DISCOVERY_TIMEOUT_SECONDS,
    });
    configurations.set(key, pending);
    pending.catch(() => configurations.delete(key));
  }
  try {
    return await pending;
  } catch {
    throw new ServiceUnavailableError(MESSAGES.unreachable);
  }
}

export interface GoogleUrl {
  url: string;
  state: string;
  expiresIn: number;
}

/** Step 1: a new pending authorization and the provider address to send the person to. */
export async function startGoogleSignIn(knex: Knex, config: Config): Promise<GoogleUrl> {
  const provider = await providerConfiguration(config);
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const codeVerifier = oidc.randomPKCECodeVerifier();
  const codeChallenge = await oidc.calculatePKCECodeChallenge(codeVerifier);
  await knex('oauthStates').insert({
    id: randomUUID(),
    provider: 'google',
    stateFingerprint: fingerprint(keysOf(config).oneTimeToken, state),
    codeVerifier,
    nonce,
    expiresAt: new Date(Date.now() + PENDING_AUTHORIZATION_SECONDS * 1000),
  });
  // pending authorizations nobody finished are removed a few at a time by later ones
  await knex('oauthStates')
    .whereIn('id', knex('oauthStates').select('id').where('expiresAt', '<', knex.fn.now()).limit(100))
    .delete();
  const url = oidc.buildAuthorizationUrl(provider, {
    redirect_uri: redirectUri(config),
    scope: SCOPE,
    state,
    nonce,
    code_challenge: codeChallenge,
    code_challenge_method: 'S256',
  });
  return { url: url.toString(), state, expiresIn: PENDING_AUTHORIZATION_SECONDS };
}

interface PendingAuthorization {
  codeVerifier: string;
  nonce: string;
}

const PROVIDER_UNAVAILABLE_CODES = new Set(['OAUTH_TIMEOUT', 'OAUTH_ABORT', 'OAUTH_RESPONSE_IS_NOT_CONFORM']);

/**
 * Failures of the exchange with the provider: its own refusal (401), an answer that cannot be verified (401),
 * or no usable answer (503). Anything else is a fault of ours and stays a 500.
 */
function providerFailure(err: unknown): unknown {
  if (err instanceof oidc.AuthorizationResponseError) {
    return new UnauthorizedError(`the identity provider did not sign the person in (${err.error})`);
  }
  if (err instanceof oidc.ResponseBodyError) {
    return err.status >= 500
      ? new ServiceUnavailableError(MESSAGES.unreachable)
      : new UnauthorizedError(MESSAGES.notVerified);
  }
  if (err instanceof oidc.ClientError) {
    return PROVIDER_UNAVAILABLE_CODES.has(err.code ?? '')
      ? new ServiceUnavailableError(MESSAGES.unreachable)
      : new UnauthorizedError(MESSAGES.notVerified);
  }
  // fetch() itself failed: refused connection, DNS, TLS
  if (err instanceof TypeError && err.message === 'fetch failed')
    return new ServiceUnavailableError(MESSAGES.unreachable);
  return err;
}

export interface CallbackResult {
  code: string;
  expiresIn: number;
}

/**
 * Step 2: the provider's callback. `query` is the callback's query string as received. Answers our one-time
 * code, or throws the typed error that says why not.
 */
export async function completeGoogleSignIn(
  deps: { knex: Knex; config: Config },
  run: RunUnitOfWork,
  query: Record<string, string>,
): Promise<CallbackResult> {
  const { knex, config } = deps;
  const provider = await providerConfiguration(config);
  const state = query.state;
  if (!state) throw new BadRequestError(MESSAGES.badState);
  // consumed at once, before talking to the provider: a state works once, whatever follows
  const [pending] = (await knex('oauthStates')
    .where({ stateFingerprint: fingerprint(keysOf(config).oneTimeToken, state), provider: 'google' })
    .whereNull('usedAt')
    .where('expiresAt', '>', knex.fn.now())
    .update({ usedAt: knex.fn.now() })
    .returning(['codeVerifier', 'nonce'])) as PendingAuthorization[];
  if (!pending) throw new BadRequestError(MESSAGES.badState);

  const currentUrl = new URL(redirectUri(config));
  for (const [name, value] of Object.entries(query)) currentUrl.searchParams.set(name, value);
  let claims: oidc.IDToken | undefined;
  try {
    const tokens = await oidc.authorizationCodeGrant(provider, currentUrl, {
      pkceCodeVerifier: pending.codeVerifier,
      expectedState: state,
      expectedNonce: pending.nonce,
      idTokenExpected: true,
    });
    claims = tokens.claims();
  } catch (err) {
    throw providerFailure(err);
  }
  if (!claims) throw new UnauthorizedError(MESSAGES.notVerified);
  const subject = claims.sub;
  const email = typeof claims.email === 'string' ? claims.email.trim() : '';

  return run(async ({ trx, correlationId }) => {
    // a recorded subject wins (Google addresses can change); otherwise the verified address, once
    let person = (await personAccounts(trx).where('p.googleSubject', subject).first()) as
      PersonAccount | undefined;
    if (!person) {
      if (claims.email_verified !== true || !email) throw new UnauthorizedError(MESSAGES.emailNotVerified);
      person = await personByEmail(trx, email, { forUpdate: true });
      // an address already linked to another Google account is not taken over by a second one
      if (!person || (person.googleSubject && person.googleSubject !== subject))
        throw new UnauthorizedError(MESSAGES.noAccount);
    }
    refuseInactive(person);
    if (!person.googleSubject) {
      await trx('people')
        .where({ id: person.id })
        .update({ googleSubject: subject, updatedAt: trx.fn.now() });
      await recordAudit(trx, {
        companyId: person.companyId,
        personId: person.id,
        action: 'person.google_linked',
        resourceType: 'person',
        resourceId: person.id,
        correlationId,
      });
    }
    const { token: code } = await issueOneTimeToken(trx, config.secretKey, {
      companyId: person.companyId,
      personId: person.id,
      purpose: 'oauth_exchange',
      // bound to the state, which only the browser that began the sign-in holds (login CSRF)
      data: { provider: 'google', stateFingerprint: fingerprint(keysOf(config).oneTimeToken, state) },
    });
    return { code, expiresIn: EXCHANGE_CODE_SECONDS };
  });
}

type ExchangeOutcome = { ok: true; pair: TokenPair } | { ok: false; error: AppError };

/** Step 3: our one-time code and the state it is bound to → a token pair. The code works once. */
export async function exchangeCode(
  deps: { config: Config },
  run: RunUnitOfWork,
  code: string,
  state: string,
): Promise<TokenPair> {
  const { config } = deps;
  const outcome = await run(async ({ trx, correlationId }): Promise<ExchangeOutcome> => {
    // spent here, whatever follows: the UPDATE commits even when the answer is a refusal
    const row = await consumeOneTimeToken(trx, config.secretKey, 'oauth_exchange', code);
    const bound = typeof row?.data.stateFingerprint === 'string' ? row.data.stateFingerprint : '';
    if (!row?.personId || !constantTimeEqual(bound, fingerprint(keysOf(config).oneTimeToken, state)))
      return { ok: false, error: new UnauthorizedError(MESSAGES.badCode) };
    // read afresh: the person or the company may have changed since the callback
    const person = (await personAccounts(trx).where('p.id', row.personId).first()) as
      PersonAccount | undefined;
    if (!person) return { ok: false, error: new UnauthorizedError(MESSAGES.badCode) };
    try {
      refuseInactive(person);
    } catch (err) {
      return { ok: false, error: err as AppError };
    }
    const pair = await startSession(trx, keysOf(config).session, person, {
      method: 'google',
      correlationId,
    });
    return { ok: true, pair };
  });
  if (!outcome.ok) throw outcome.error;
  return outcome.pair;
}

import { AppError } from '../../../common/errors';
import {
  completeGoogleSignIn,
  exchangeCode,
  MESSAGES,
  startGoogleSignIn,
} from '../../../domain/identity/google';
import type { AppContext } from '../../context';
import { route, type Reply } from '../../routing';
import { tokenPairSchema } from '../../schemas';
import { unitsOfWork } from '../../unitOfWork';

const NO_STORE = { 'Cache-Control': 'no-store' };

const urlResponse = {
  type: 'object',
  required: ['url', 'state', 'expiresIn'],
  properties: {
    url: { type: 'string', format: 'uri', description: 'the provider address to send the person to' },
    state: {
      type: 'string',
      description:
        'keep it in the browser (e.g. sessionStorage) and send it with the code to /auth/oauth/exchange',
    },
    expiresIn: { type: 'integer', description: 'seconds the sign-in may take before it must start again' },
  },
} as const;

const codeResponse = {
  type: 'object',
  required: ['code', 'expiresIn'],
  properties: {
    code: { type: 'string', description: 'one-time code for POST /auth/oauth/exchange' },
    expiresIn: { type: 'integer', description: 'seconds the code stays valid (60)' },
  },
} as const;

/**
 * With OAUTH_REDIRECT_AFTER set, the browser goes back to the front-end whatever the outcome: `?code=` on
 * success, `?error=<status>&message=…&correlationId=…` otherwise (a JSON error body is of no use to a person
 * looking at a browser). Without it, the callback answers JSON.
 */
function frontEndRedirect(ctx: AppContext, params: Record<string, string>): Reply {
  const target = new URL(ctx.deps.config.oauth.redirectAfter);
  for (const [name, value] of Object.entries(params)) target.searchParams.set(name, value);
  return { status: 302, headers: { ...NO_STORE, Location: target.toString() } };
}

export const oauthRoutes = [
  route({
    method: 'post',
    path: '/auth/oauth/google/url',
    summary: 'Begin a sign-in with Google: answers the provider address to send the person to',
    tag: 'Authentication',
    access: { public: true, system: 'oauth-sign-in' },
    responses: {
      200: {
        description: 'the provider address, and the state to keep for the exchange',
        schema: urlResponse,
      },
      404: { description: 'Google sign-in is not enabled on this service (GOOGLE_CLIENT_ID is empty)' },
      503: { description: 'the provider cannot be reached' },
    },
    handler: async (ctx) => {
      const started = await startGoogleSignIn(ctx.deps.knex, ctx.deps.config);
      return { body: started, headers: NO_STORE };
    },
  }),
  route({
    method: 'get',
    path: '/auth/oauth/google/callback',
    summary: 'Where Google sends the browser back: finishes the sign-in and hands out a one-time code',
    tag: 'Authentication',
    access: { public: true, system: 'oauth-sign-in' },
    // the provider adds parameters of its own (scope, authuser, prompt, hd, iss...): all are accepted
    query: {
      type: 'object',
      additionalProperties: { type: 'string' },
      properties: {
        code: { type: 'string' },
        state: { type: 'string' },
        error: { type: 'string' },
      },
    },
    responses: {
      200: { description: 'no OAUTH_REDIRECT_AFTER configured: the one-time code', schema: codeResponse },
      302: { description: 'OAUTH_REDIRECT_AFTER configured: to the front-end with ?code= or ?error=' },
      400: { description: 'unknown, expired, already used or missing state' },
      401: {
        description:
          'the provider refused, the answer could not be verified (PKCE, nonce, signature), the address is not verified, or no account matches',
      },
      403: { description: 'the account is not activated, is disabled, or its company is not active' },
      404: { description: 'Google sign-in is not enabled on this service' },
      503: { description: 'the provider cannot be reached' },
    },
    handler: async (ctx, { query }: { query: Record<string, string> }) => {
      const { config } = ctx.deps;
      const toFrontEnd = Boolean(config.oauth.redirectAfter);
      try {
        const result = await completeGoogleSignIn(ctx.deps, unitsOfWork(ctx), query);
        if (toFrontEnd) return frontEndRedirect(ctx, { code: result.code });
        return { body: result, headers: NO_STORE };
      } catch (err) {
        if (!toFrontEnd || !(err instanceof AppError)) throw err;
        ctx.state.log.info({ status: err.statusCode, reason: err.message }, 'Google sign-in refused');
        return frontEndRedirect(ctx, {
          error: String(err.statusCode),
          message: err.message,
          correlationId: ctx.state.correlationId,
        });
      }
    },
  }),
  route({
    method: 'post',
    path: '/auth/oauth/exchange',
    summary: 'Trade the one-time code from the provider callback for a token pair (once)',
    tag: 'Authentication',
    access: { public: true, system: 'oauth-sign-in' },
    bucket: 'signIn',
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['code', 'state'],
      properties: {
        code: { type: 'string', minLength: 1, maxLength: 200 },
        state: {
          type: 'string',
          minLength: 1,
          maxLength: 200,
          description: 'the state answered by POST /auth/oauth/google/url',
        },
      },
    },
    responses: {
      200: { description: 'the token pair', schema: tokenPairSchema },
      401: { description: `${MESSAGES.badCode}: unknown, used, expired, or not bound to this state` },
      403: { description: 'the account is not activated, is disabled, or its company is not active' },
    },
    handler: async (ctx, { body }: { body: { code: string; state: string } }) => {
      const pair = await exchangeCode(ctx.deps, unitsOfWork(ctx), body.code, body.state);
      return { body: pair, headers: NO_STORE };
    },
  }),
];

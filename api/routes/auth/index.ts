import { ForbiddenError, UnauthorizedError } from '../../../common/errors';
import { personByEmail, refuseInactive } from '../../auth/accountState';
import { keysOf } from '../../auth/keys';
import { verifyPassword } from '../../auth/passwords';
import { SignInAttempt } from '../../auth/signInFailures';
import {
  endSession,
  INVALID_CREDENTIALS,
  rotateRefreshToken,
  ownSessionOfRefreshToken,
  startSession,
} from '../../auth/sessions';
import { principalOf, UNAUTHENTICATED } from '../../middlewares/authenticate';
import { route } from '../../routing';
import { tokenPairSchema } from '../../schemas';
import { unitOfWork } from '../../../db/unitOfWork';

const loginBody = {
  type: 'object',
  additionalProperties: false,
  required: ['email', 'password'],
  properties: {
    email: { type: 'string', minLength: 1, maxLength: 320 },
    password: { type: 'string', minLength: 1, maxLength: 200 },
  },
} as const;

const refreshBody = {
  type: 'object',
  additionalProperties: false,
  required: ['refreshToken'],
  properties: { refreshToken: { type: 'string', minLength: 1, maxLength: 200 } },
} as const;

export const authRoutes = [
  route({
    method: 'post',
    path: '/auth/login',
    summary: 'Sign in with email and password',
    tag: 'Authentication',
    access: { public: true, system: 'sign-in' },
    bucket: 'signIn',
    body: loginBody,
    responses: {
      200: { description: 'the token pair', schema: tokenPairSchema },
      401: { description: 'invalid email or password (same message for an unknown address)' },
      403: { description: 'the account is not activated, is disabled, or its company is not active' },
      429: {
        description:
          'more than 10 attempts a minute from this address (whatever token is attached), or too many failed ' +
          'sign-ins for this account (SIGN_IN_FAILURES_PER_ACCOUNT in SIGN_IN_FAILURE_WINDOW_SECONDS, from any ' +
          'address; unknown addresses are counted the same way); Retry-After gives the seconds to wait',
      },
    },
    handler: async (ctx, { body }: { body: { email: string; password: string } }) => {
      const { knex, config } = ctx.deps;
      // the per-account failure limit, taken before the password is checked (api/auth/signInFailures.ts)
      const attempt = await SignInAttempt.begin(ctx, body.email);
      const person = await personByEmail(knex, body.email);
      // one password verification whether or not the address exists: no timing difference worth measuring
      const ok = await verifyPassword(person?.passwordHash, body.password);
      if (!person || !ok) throw new UnauthorizedError(INVALID_CREDENTIALS);
      await attempt.succeeded();
      refuseInactive(person);
      const pair = await unitOfWork(knex, (trx) =>
        startSession(trx, keysOf(config).session, person, {
          method: 'password',
          correlationId: ctx.state.correlationId,
          // a reset between the verification and the session: 401 like a wrong password
          passwordHash: person.passwordHash,
        }),
      );
      return { body: pair };
    },
  }),
  route({
    method: 'post',
    path: '/auth/refresh',
    summary: 'Exchange a refresh token for a new pair (the old refresh token stops working)',
    tag: 'Authentication',
    access: { public: true, system: 'sign-in' },
    body: refreshBody,
    responses: {
      200: { description: 'a new token pair', schema: tokenPairSchema },
      401: {
        description:
          'unknown, expired, already used or ended refresh token; reusing a rotated token ends the session',
      },
      403: { description: 'the company is suspended' },
    },
    handler: async (ctx, { body }: { body: { refreshToken: string } }) => {
      const { knex, config } = ctx.deps;
      const outcome = await rotateRefreshToken(
        knex,
        keysOf(config).session,
        body.refreshToken,
        ctx.state.correlationId,
      );
      if (outcome.ok) return { body: outcome.pair };
      if (outcome.reason === 'company_suspended') throw new ForbiddenError('the company is suspended');
      throw new UnauthorizedError(UNAUTHENTICATED);
    },
  }),
  route({
    method: 'post',
    path: '/auth/logout',
    summary: 'End the session at once',
    tag: 'Authentication',
    access: { roles: ['admin', 'employee'], demoAllowed: true },
    body: refreshBody,
    responses: {
      204: { description: 'the session has ended (answered the same when it had ended already)' },
    },
    handler: async (ctx, { body }: { body: { refreshToken: string } }) => {
      const { knex, config } = ctx.deps;
      const auth = principalOf(ctx);
      await unitOfWork(knex, async (trx) => {
        const sessions = new Set([auth.sessionId!]);
        // the refresh token's session is ended too when it belongs to the same person
        const owned = await ownSessionOfRefreshToken(
          trx,
          keysOf(config).session,
          body.refreshToken,
          auth.personId,
        );
        if (owned) sessions.add(owned);
        for (const id of sessions) {
          await endSession(trx, id, 'logout', {
            companyId: auth.companyId,
            personId: auth.personId,
            correlationId: ctx.state.correlationId,
          });
        }
      });
      return { status: 204 };
    },
  }),
];

import { refreshSession, signIn, signOut } from '../../../domain/identity/signIn';
import { principalOf } from '../../middlewares/authenticate';
import { route } from '../../routing';
import { tokenPairSchema } from '../../schemas';
import { domainDeps, inUnitOfWork, unitsOfWork } from '../../unitOfWork';

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
      return { body: await signIn(domainDeps(ctx), unitsOfWork(ctx), body) };
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
      return { body: await refreshSession(ctx.deps, unitsOfWork(ctx), body.refreshToken) };
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
      204: {
        description:
          'the session has ended (answered the same when it had ended already): its refresh token is refused from now on; its access token still expires on its own clock (at most 900 s)',
      },
    },
    handler: async (ctx, { body }: { body: { refreshToken: string } }) => {
      const auth = principalOf(ctx);
      await inUnitOfWork(ctx, (uow) => signOut(ctx.deps, auth, uow, body.refreshToken));
      return { status: 204 };
    },
  }),
];

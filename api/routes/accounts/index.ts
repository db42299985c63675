import {
  acceptInvitation,
  activate,
  forgotPassword,
  register,
  resendActivation,
  resetPassword,
  type Registration,
} from '../../../domain/identity/accounts';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../../domain/identity/passwords';
import { route } from '../../routing';
import { NOT_BLANK, tokenPairSchema } from '../../schemas';
import { domainDeps, inUnitOfWork, unitsOfWork } from '../../unitOfWork';

const email = { type: 'string', format: 'email', maxLength: 320 } as const;
const password = { type: 'string', minLength: PASSWORD_MIN_LENGTH, maxLength: PASSWORD_MAX_LENGTH } as const;
const token = { type: 'string', minLength: 1, maxLength: 200 } as const;

const accepted = {
  202: {
    description: 'accepted; the same answer whether or not the address is known',
    schema: {
      type: 'object',
      additionalProperties: false,
      required: ['status'],
      properties: { status: { const: 'accepted' } },
    },
  },
} as const;

export const accountRoutes = [
  route({
    method: 'post',
    path: '/auth/register',
    summary: 'Register a new company with its first admin; an activation mail is sent',
    tag: 'Accounts',
    access: { public: true, system: 'register' },
    bucket: 'register',
    // it creates something: a retry with the same Idempotency-Key (scoped to the client address, since
    // there is no company yet) replays the 201 instead of answering 409
    idempotent: true,
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['companyName', 'name', 'email', 'password'],
      properties: {
        companyName: { type: 'string', minLength: 1, maxLength: 200, pattern: NOT_BLANK },
        name: { type: 'string', minLength: 1, maxLength: 200, pattern: NOT_BLANK },
        email,
        password,
      },
    },
    responses: {
      201: {
        description: 'company and admin created; the admin is not activated until the mailed token is used',
        schema: {
          type: 'object',
          properties: {
            companyId: { type: 'string', format: 'uuid' },
            personId: { type: 'string', format: 'uuid' },
            status: { const: 'not_activated' },
          },
        },
      },
      409: { description: 'an account with this address already exists' },
    },
    handler: async (ctx, { body }: { body: Registration }) => {
      const created = await register(domainDeps(ctx), unitsOfWork(ctx), body);
      return { status: 201, body: created };
    },
  }),
  route({
    method: 'post',
    path: '/auth/activate',
    summary: 'Activate an account with the mailed token',
    tag: 'Accounts',
    access: { public: true, system: 'account-tokens' },
    bucket: 'register',
    body: { type: 'object', additionalProperties: false, required: ['token'], properties: { token } },
    responses: {
      200: {
        description: 'activated',
        schema: { type: 'object', properties: { status: { const: 'active' } } },
      },
      401: { description: 'invalid, used or expired token' },
    },
    handler: async (ctx, { body }: { body: { token: string } }) => {
      await inUnitOfWork(ctx, (uow) => activate(domainDeps(ctx), uow, body.token));
      return { body: { status: 'active' } };
    },
  }),
  route({
    method: 'post',
    path: '/auth/resend-activation',
    summary: 'Send the activation mail again (earlier activation tokens stop working)',
    tag: 'Accounts',
    access: { public: true, system: 'account-tokens' },
    bucket: 'forgotPassword',
    body: { type: 'object', additionalProperties: false, required: ['email'], properties: { email } },
    responses: accepted,
    handler: async (ctx, { body }: { body: { email: string } }) => {
      await inUnitOfWork(ctx, (uow) => resendActivation(domainDeps(ctx), uow, body.email));
      return { status: 202, body: { status: 'accepted' } };
    },
  }),
  route({
    method: 'post',
    path: '/auth/forgot-password',
    summary: 'Mail a password reset token',
    tag: 'Accounts',
    access: { public: true, system: 'account-tokens' },
    bucket: 'forgotPassword',
    body: { type: 'object', additionalProperties: false, required: ['email'], properties: { email } },
    responses: accepted,
    handler: async (ctx, { body }: { body: { email: string } }) => {
      await inUnitOfWork(ctx, (uow) => forgotPassword(domainDeps(ctx), uow, body.email));
      return { status: 202, body: { status: 'accepted' } };
    },
  }),
  route({
    method: 'post',
    path: '/auth/reset-password',
    summary: 'Set a new password with the mailed token; every session of the person ends',
    tag: 'Accounts',
    access: { public: true, system: 'account-tokens' },
    bucket: 'register',
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['token', 'password'],
      properties: { token, password },
    },
    responses: {
      204: { description: 'password changed' },
      401: { description: 'invalid, used or expired token' },
    },
    handler: async (ctx, { body }: { body: { token: string; password: string } }) => {
      await resetPassword(domainDeps(ctx), unitsOfWork(ctx), body);
      return { status: 204 };
    },
  }),
  route({
    method: 'post',
    path: '/auth/accept-invite',
    summary: 'Accept an invitation: creates the login and signs the person in',
    tag: 'Authentication',
    access: { public: true, system: 'account-tokens' },
    bucket: 'register',
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['token', 'password'],
      properties: { token, password },
    },
    responses: {
      200: { description: 'the token pair', schema: tokenPairSchema },
      401: { description: 'invalid, used or expired invitation' },
      403: { description: 'the company is not active' },
    },
    handler: async (ctx, { body }: { body: { token: string; password: string } }) => {
      return { body: await acceptInvitation(domainDeps(ctx), unitsOfWork(ctx), body) };
    },
  }),
];

import { randomUUID } from 'node:crypto';
import type { Config } from '../../../common/config';
import type { Mail } from '../../../common/mailer';
import { ConflictError, ForbiddenError, UnauthorizedError } from '../../../common/errors';
import { recordAudit } from '../../../db/audit';
import { isUniqueViolation } from '../../../db/errors';
import { personByEmail } from '../../auth/accountState';
import { keysOf } from '../../auth/keys';
import { activationMail, mailAfterCommit, passwordResetMail } from '../../auth/mails';
import { consumeOneTimeToken, issueOneTimeToken } from '../../auth/oneTimeTokens';
import { hashPassword, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../auth/passwords';
import { endSessionsOf, startSession } from '../../auth/sessions';
import type { AppContext } from '../../context';
import { route } from '../../routing';
import { tokenPairSchema } from '../../schemas';
import { unitOfWork } from '../../../db/unitOfWork';

/** Answer for every invalid, used or expired e-mailed token (one message, like rule 7). */
const INVALID_TOKEN = 'invalid or expired token';

const email = { type: 'string', format: 'email', maxLength: 320 } as const;
const password = { type: 'string', minLength: PASSWORD_MIN_LENGTH, maxLength: PASSWORD_MAX_LENGTH } as const;
const token = { type: 'string', minLength: 1, maxLength: 200 } as const;

const isEmailTaken = (err: unknown) => isUniqueViolation(err, 'people_email_unique');

const accepted = { 202: { description: 'accepted; the same answer whether or not the address is known' } };

/**
 * Issues a one-time token for the person and mails it after commit without waiting for the mail server
 * (answer time must not tell which addresses are registered).
 */
async function mailNewToken(
  ctx: AppContext,
  person: { id: string; companyId: string; email: string },
  purpose: 'activation' | 'password_reset',
  mail: (config: Config, to: string, token: string) => Mail,
): Promise<void> {
  const { knex, config } = ctx.deps;
  const issued = await unitOfWork(knex, (trx) =>
    issueOneTimeToken(trx, config.secretKey, { companyId: person.companyId, personId: person.id, purpose }),
  );
  await mailAfterCommit(ctx, mail(config, person.email, issued.token), { wait: false });
}

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
        companyName: { type: 'string', minLength: 1, maxLength: 200 },
        name: { type: 'string', minLength: 1, maxLength: 200 },
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
    handler: async (
      ctx,
      { body }: { body: { companyName: string; name: string; email: string; password: string } },
    ) => {
      const { knex, config } = ctx.deps;
      const passwordHash = await hashPassword(body.password);
      const companyId = randomUUID();
      const personId = randomUUID();
      let activation: { token: string };
      try {
        activation = await unitOfWork(knex, async (trx) => {
          await trx('companies').insert({
            id: companyId,
            name: body.companyName,
            status: 'active',
            plan: null,
          });
          await trx('people').insert({
            id: personId,
            companyId,
            email: body.email.trim(),
            name: body.name,
            role: 'admin',
            status: 'not_activated',
            passwordHash,
          });
          await recordAudit(trx, {
            companyId,
            personId,
            action: 'company.registered',
            resourceType: 'company',
            resourceId: companyId,
            correlationId: ctx.state.correlationId,
          });
          return issueOneTimeToken(trx, config.secretKey, { companyId, personId, purpose: 'activation' });
        });
      } catch (err) {
        if (isEmailTaken(err)) throw new ConflictError('an account with this address already exists');
        throw err;
      }
      await mailAfterCommit(ctx, activationMail(config, body.email.trim(), activation.token), { wait: true });
      return { status: 201, body: { companyId, personId, status: 'not_activated' } };
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
      const { knex, config } = ctx.deps;
      await unitOfWork(knex, async (trx) => {
        const used = await consumeOneTimeToken(trx, config.secretKey, 'activation', body.token);
        if (!used?.personId) throw new UnauthorizedError(INVALID_TOKEN);
        const updated = await trx('people')
          .where({ id: used.personId, status: 'not_activated' })
          .update({ status: 'active', updatedAt: trx.fn.now() });
        if (updated === 0) throw new UnauthorizedError(INVALID_TOKEN);
        await recordAudit(trx, {
          companyId: used.companyId,
          personId: used.personId,
          action: 'person.activated',
          resourceType: 'person',
          resourceId: used.personId,
          correlationId: ctx.state.correlationId,
        });
      });
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
      const person = await personByEmail(ctx.deps.knex, body.email);
      if (person?.status === 'not_activated') {
        const { knex } = ctx.deps;
        // an invited person has no activation: they accept the invitation instead
        const invited: unknown = await knex('oneTimeTokens')
          .where({ personId: person.id, purpose: 'invitation' })
          .first();
        if (!invited) await mailNewToken(ctx, person, 'activation', activationMail);
      }
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
      const person = await personByEmail(ctx.deps.knex, body.email);
      if (person && person.status === 'active') {
        await mailNewToken(ctx, person, 'password_reset', passwordResetMail);
      }
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
      const { knex, config } = ctx.deps;
      const passwordHash = await hashPassword(body.password);
      await unitOfWork(knex, async (trx) => {
        const used = await consumeOneTimeToken(trx, config.secretKey, 'password_reset', body.token);
        if (!used?.personId) throw new UnauthorizedError(INVALID_TOKEN);
        const updated = await trx('people')
          .where({ id: used.personId, status: 'active' })
          .update({ passwordHash, updatedAt: trx.fn.now() });
        if (updated === 0) throw new UnauthorizedError(INVALID_TOKEN);
        await endSessionsOf(trx, used.personId, 'password_reset', {
          companyId: used.companyId,
          personId: used.personId,
          correlationId: ctx.state.correlationId,
        });
        await recordAudit(trx, {
          companyId: used.companyId,
          personId: used.personId,
          action: 'person.password_reset',
          resourceType: 'person',
          resourceId: used.personId,
          correlationId: ctx.state.correlationId,
        });
      });
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
      const { knex, config } = ctx.deps;
      const passwordHash = await hashPassword(body.password);
      const pair = await unitOfWork(knex, async (trx) => {
        const used = await consumeOneTimeToken(trx, config.secretKey, 'invitation', body.token);
        if (!used?.personId) throw new UnauthorizedError(INVALID_TOKEN);
        const company = (await trx('companies').where({ id: used.companyId }).first()) as { status: string };
        if (company.status !== 'active') throw new ForbiddenError('the company is not active');
        const updated = await trx('people')
          .where({ id: used.personId, status: 'not_activated' })
          .update({ status: 'active', passwordHash, updatedAt: trx.fn.now() });
        if (updated === 0) throw new UnauthorizedError(INVALID_TOKEN);
        await recordAudit(trx, {
          companyId: used.companyId,
          personId: used.personId,
          action: 'invitation.accepted',
          resourceType: 'person',
          resourceId: used.personId,
          correlationId: ctx.state.correlationId,
        });
        return startSession(
          trx,
          keysOf(config).session,
          { id: used.personId, companyId: used.companyId },
          { method: 'invitation', correlationId: ctx.state.correlationId },
        );
      });
      return { body: pair };
    },
  }),
];

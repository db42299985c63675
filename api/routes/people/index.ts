import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { ConflictError, NotFoundError } from '../../../common/errors';
import { planLimits } from '../../../domain/plans/plans';
import { recordAudit } from '../../../db/audit';
import { isUniqueViolation } from '../../../db/errors';
import { invitationMail, mailAfterCommit } from '../../auth/mails';
import { issueOneTimeToken, voidOneTimeTokens } from '../../auth/oneTimeTokens';
import { endSessionsOf } from '../../auth/sessions';
import type { Principal } from '../../context';
import { pageList, type PageQuery } from '../../lists';
import { principalOf } from '../../middlewares/authenticate';
import { route, type Role } from '../../routing';
import { pageEnvelopeSchema, pageQuerySchema, uuidParams } from '../../schemas';
import { unitOfWork } from '../../../db/unitOfWork';

const personSchema = {
  type: 'object',
  required: ['id', 'email', 'name', 'role', 'status', 'createdAt'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    email: { type: 'string' },
    name: { type: 'string' },
    role: { enum: ['admin', 'employee'] },
    status: { enum: ['not_activated', 'active', 'disabled'] },
    createdAt: { type: 'string', format: 'date-time' },
  },
} as const;

interface PersonRow {
  id: string;
  companyId: string;
  email: string;
  name: string;
  role: Role;
  status: 'not_activated' | 'active' | 'disabled';
  createdAt: Date;
}

function present(p: PersonRow) {
  return {
    id: p.id,
    email: p.email,
    name: p.name,
    role: p.role,
    status: p.status,
    createdAt: p.createdAt.toISOString(),
  };
}

/** Locks the company row: people-limit checks and last-admin checks are serialised per company. */
async function lockCompany(trx: Knex.Transaction, companyId: string) {
  return (await trx('companies').where({ id: companyId }).forUpdate().first()) as {
    id: string;
    name: string;
    plan: 'free' | 'basic' | 'premium' | null;
  };
}

async function findPerson(trx: Knex.Transaction, auth: Principal, id: string): Promise<PersonRow> {
  const person = (await trx('people').where({ id, companyId: auth.companyId }).forUpdate().first()) as
    PersonRow | undefined;
  if (!person) throw new NotFoundError('person not found');
  return person;
}

/** The company must keep at least one active admin. */
async function ensureAnotherActiveAdmin(
  trx: Knex.Transaction,
  companyId: string,
  exceptId: string,
): Promise<void> {
  const row = (await trx('people')
    .where({ companyId, role: 'admin', status: 'active' })
    .whereNot({ id: exceptId })
    .count({ n: '*' })
    .first()) as { n: string };
  if (Number(row.n) === 0) throw new ConflictError('the company needs at least one active admin');
}

export const peopleRoutes = [
  route({
    method: 'post',
    path: '/invitations',
    summary: 'Invite a person by e-mail with a role (they accept with POST /auth/accept-invite)',
    tag: 'People',
    access: { roles: ['admin'] },
    idempotent: true,
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['email', 'role'],
      properties: {
        email: { type: 'string', format: 'email', maxLength: 320 },
        role: { enum: ['admin', 'employee'] },
        name: { type: 'string', maxLength: 200 },
      },
    },
    responses: {
      201: {
        description:
          'the invited person (status not_activated until accepted) and when the invitation expires',
        schema: {
          ...personSchema,
          properties: {
            ...personSchema.properties,
            invitationExpiresAt: { type: 'string', format: 'date-time' },
          },
        },
      },
      409: { description: 'the plan’s limit on people is reached, or the address is already registered' },
    },
    handler: async (ctx, { body }: { body: { email: string; role: Role; name?: string } }) => {
      const auth = principalOf(ctx);
      const { knex, config } = ctx.deps;
      let result: { person: PersonRow; token: string; expiresAt: Date; companyName: string };
      try {
        result = await unitOfWork(knex, async (trx) => {
          const company = await lockCompany(trx, auth.companyId);
          // a company without a plan yet gets the Free limits
          const limit = planLimits(company.plan ?? 'free').people;
          if (limit !== null) {
            const row = (await trx('people')
              .where({ companyId: auth.companyId })
              .count({ n: '*' })
              .first()) as {
              n: string;
            };
            if (Number(row.n) >= limit) {
              throw new ConflictError(`the ${company.plan ?? 'free'} plan allows ${limit} people`);
            }
          }
          const [person] = (await trx('people')
            .insert({
              id: randomUUID(),
              companyId: auth.companyId,
              email: body.email.trim(),
              name: body.name ?? '',
              role: body.role,
              status: 'not_activated',
            })
            .returning('*')) as PersonRow[];
          const issued = await issueOneTimeToken(trx, config.secretKey, {
            companyId: auth.companyId,
            personId: person.id,
            purpose: 'invitation',
            data: { invitedBy: auth.personId },
          });
          await recordAudit(trx, {
            companyId: auth.companyId,
            personId: auth.personId,
            action: 'person.invited',
            resourceType: 'person',
            resourceId: person.id,
            correlationId: ctx.state.correlationId,
            details: { role: body.role },
          });
          return { person, token: issued.token, expiresAt: issued.expiresAt, companyName: company.name };
        });
      } catch (err) {
        if (isUniqueViolation(err, 'people_email_unique'))
          throw new ConflictError('an account with this address already exists');
        throw err;
      }
      await mailAfterCommit(
        ctx,
        invitationMail(config, result.person.email, result.token, result.companyName),
        {
          wait: true,
        },
      );
      return {
        status: 201,
        body: { ...present(result.person), invitationExpiresAt: result.expiresAt.toISOString() },
      };
    },
  }),
  route({
    method: 'get',
    path: '/employees',
    summary: 'List the company’s people (admins only), oldest first',
    tag: 'People',
    access: { roles: ['admin'] },
    query: pageQuerySchema,
    responses: { 200: { description: 'page-number list', schema: pageEnvelopeSchema(personSchema) } },
    handler: async (ctx, { query }: { query: PageQuery }) => {
      const auth = principalOf(ctx);
      const q = ctx.deps
        .knex('people')
        .where({ companyId: auth.companyId })
        .orderBy([
          { column: 'createdAt', order: 'asc' },
          { column: 'id', order: 'asc' },
        ]);
      return { body: await pageList(q, query, present) };
    },
  }),
  route({
    method: 'patch',
    path: '/employees/:id',
    summary:
      'Change a person’s role, or disable / re-enable them (disabling ends every session of the person; ' +
      're-enabling brings none back)',
    tag: 'People',
    access: { roles: ['admin'] },
    params: uuidParams,
    body: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      properties: { role: { enum: ['admin', 'employee'] }, status: { enum: ['active', 'disabled'] } },
    },
    responses: {
      200: { description: 'the person', schema: personSchema },
      404: { description: 'no such person in the company' },
      409: {
        description:
          'the change would leave the company without an active admin; or the person has not activated',
      },
    },
    handler: async (
      ctx,
      { params, body }: { params: { id: string }; body: { role?: Role; status?: 'active' | 'disabled' } },
    ) => {
      const auth = principalOf(ctx);
      const updated = await unitOfWork(ctx.deps.knex, async (trx) => {
        await lockCompany(trx, auth.companyId);
        const person = await findPerson(trx, auth, params.id);
        if (body.status && person.status === 'not_activated') {
          throw new ConflictError('the person has not activated the account yet');
        }
        const losesAdmin =
          person.role === 'admin' &&
          person.status === 'active' &&
          (body.role === 'employee' || body.status === 'disabled');
        if (losesAdmin) await ensureAnotherActiveAdmin(trx, auth.companyId, person.id);
        const [row] = (await trx('people')
          .where({ id: person.id })
          .update({ ...body, updatedAt: trx.fn.now() })
          .returning('*')) as PersonRow[];
        // Disabling ends every session (audited one by one, like removal), so re-enabling brings none back:
        // the old access tokens name an ended session, the old refresh tokens belong to one. Password reset
        // links mailed before stop working too. API keys are not revoked: they follow the person's status
        // (refused while disabled) and are revoked one by one by an admin.
        let endedSessions: number | undefined;
        if (body.status === 'disabled' && person.status !== 'disabled') {
          const ended = await endSessionsOf(trx, person.id, 'person_disabled', {
            companyId: auth.companyId,
            personId: auth.personId,
            correlationId: ctx.state.correlationId,
          });
          endedSessions = ended.length;
          await voidOneTimeTokens(trx, person.id, 'password_reset');
        }
        await recordAudit(trx, {
          companyId: auth.companyId,
          personId: auth.personId,
          action: 'person.updated',
          resourceType: 'person',
          resourceId: person.id,
          correlationId: ctx.state.correlationId,
          details: {
            from: { role: person.role, status: person.status },
            to: body,
            ...(endedSessions === undefined ? {} : { endedSessions }),
          },
        });
        return row;
      });
      return { body: present(updated) };
    },
  }),
  route({
    method: 'delete',
    path: '/employees/:id',
    summary: 'Remove a person: their sessions end and their API keys stop working',
    tag: 'People',
    access: { roles: ['admin'] },
    params: uuidParams,
    responses: {
      204: { description: 'removed' },
      404: { description: 'no such person in the company' },
      409: { description: 'the company would be left without an active admin' },
    },
    handler: async (ctx, { params }: { params: { id: string } }) => {
      const auth = principalOf(ctx);
      await unitOfWork(ctx.deps.knex, async (trx) => {
        await lockCompany(trx, auth.companyId);
        const person = await findPerson(trx, auth, params.id);
        if (person.role === 'admin' && person.status === 'active') {
          await ensureAnotherActiveAdmin(trx, auth.companyId, person.id);
        }
        // ended (and audited) before the person row goes, which takes the sessions with it
        await endSessionsOf(trx, person.id, 'person_removed', {
          companyId: auth.companyId,
          personId: auth.personId,
          correlationId: ctx.state.correlationId,
        });
        await trx('people').where({ id: person.id }).delete();
        await recordAudit(trx, {
          companyId: auth.companyId,
          personId: auth.personId,
          action: 'person.removed',
          resourceType: 'person',
          resourceId: person.id,
          correlationId: ctx.state.correlationId,
          details: { email: person.email, role: person.role },
        });
      });
      return { status: 204 };
    },
  }),
];

import {
  invitePerson,
  peopleList,
  removePerson,
  updatePerson,
  type Invitation,
  type PersonChange,
} from '../../../domain/identity/people';
import { presentPerson } from '../../../domain/identity/present';
import { pageList, type PageQuery } from '../../lists';
import { principalOf } from '../../middlewares/authenticate';
import { route } from '../../routing';
import { pageEnvelopeSchema, pageQuerySchema, uuidParams } from '../../schemas';
import { domainDeps, inUnitOfWork } from '../../unitOfWork';

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
    handler: async (ctx, { body }: { body: Invitation }) => {
      const auth = principalOf(ctx);
      const { person, expiresAt } = await inUnitOfWork(ctx, (uow) =>
        invitePerson(domainDeps(ctx), auth, uow, body),
      );
      return {
        status: 201,
        body: { ...presentPerson(person), invitationExpiresAt: expiresAt.toISOString() },
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
      const q = peopleList(principalOf(ctx), ctx.deps.knex);
      return { body: await pageList(q, query, presentPerson) };
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
    handler: async (ctx, { params, body }: { params: { id: string }; body: PersonChange }) => {
      const auth = principalOf(ctx);
      const updated = await inUnitOfWork(ctx, (uow) => updatePerson(auth, uow, params.id, body));
      return { body: presentPerson(updated) };
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
      await inUnitOfWork(ctx, (uow) => removePerson(auth, uow, params.id));
      return { status: 204 };
    },
  }),
];

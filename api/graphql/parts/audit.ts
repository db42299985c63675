/**
 * The audit log in the GraphQL schema (issue 15 through issue 18's `SchemaPart`): `auditLog`, admins only
 * (`adminOnly`, as `audit:read` is an admin's over REST; the domain query refuses others too), newest first,
 * with GET /audit-log's filters, checked as REST checks them, and its cursors: a cursor is bound to its filter
 * set (the filters given, in the order of the arguments here, which is REST's order of its query parameters).
 */
import { GraphQLID, GraphQLObjectType, GraphQLString } from 'graphql';
import { BadRequestError } from '../../../common/errors';
import { presentAuditEntry } from '../../../domain/audit/present';
import { AUDIT_FILTERS, auditListName, auditLogOf, type AuditFilters } from '../../../domain/audit/queries';
import { loaders, type GraphQLContext } from '../context';
import {
  adminOnly,
  connectionComplexity,
  connectionType,
  JSONScalar,
  keysetRows,
  nn,
  pageArgs,
  readPage,
  reqStr,
  ResourceRefType,
  schemaTypes,
  str,
  toPage,
  type PageArgs,
} from '../kit';
import type { SchemaPart } from '../parts';

type AuditEntry = ReturnType<typeof presentAuditEntry>;

const AuditActorType: GraphQLObjectType = new GraphQLObjectType<AuditEntry['actor'], GraphQLContext>({
  name: 'AuditActor',
  fields: () => ({
    type: { ...reqStr, description: '`person`, `apiKey` or `system`' },
    personId: { ...str, description: 'the person; for a key its owner; null for the service' },
    person: {
      type: schemaTypes().PersonType,
      description: 'that person (null for the service, or once removed)',
      resolve: (a, _x, c) => (a.personId ? loaders.person(c).load(a.personId) : null),
    },
    apiKeyId: { ...str, description: 'the key that did it, when a key did it' },
    keyPrefix: { ...str, description: 'svc_live_<identifier> of that key' },
  }),
});

const AuditEntryType = new GraphQLObjectType<AuditEntry>({
  name: 'AuditEntry',
  description: 'One audit record (append-only; actions: README "Audit log")',
  fields: {
    id: { type: nn(GraphQLID) },
    time: reqStr,
    action: { ...reqStr, description: 'dotted name, e.g. file.deleted' },
    actor: { type: nn(AuditActorType) },
    resource: { type: nn(ResourceRefType) },
    outcome: { ...reqStr, description: '`success`, `failure` or `denied`' },
    correlationId: str,
    clientAddress: str,
    changes: {
      type: nn(JSONScalar),
      description: 'the fields changed, by name (never secrets, passwords, tokens or cell values)',
    },
  },
});

const AuditEntryConnection = connectionType('AuditEntry', AuditEntryType);

type FilterArgs = { [K in (typeof AUDIT_FILTERS)[number]]?: string | null };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;

/** The filters given, checked as GET /audit-log's query schema checks them (400 otherwise). */
function readFilters(args: FilterArgs): AuditFilters {
  const filters: AuditFilters = {};
  for (const name of AUDIT_FILTERS) {
    const value = args[name];
    if (value === null || value === undefined) continue;
    const ok =
      name === 'actorId' || name === 'apiKeyId'
        ? UUID.test(value)
        : name === 'from' || name === 'to'
          ? DATE_TIME.test(value) && !Number.isNaN(new Date(value).getTime())
          : value.length >= 1 && value.length <= 200;
    if (!ok) {
      const what =
        name === 'actorId' || name === 'apiKeyId'
          ? 'a UUID'
          : name === 'from' || name === 'to'
            ? 'a date-time'
            : '1 to 200 characters';
      throw new BadRequestError(`${name} must be ${what}`);
    }
    filters[name] = value;
  }
  return filters;
}

const filterArgs = {
  actorId: { type: GraphQLID, description: 'the person who acted (for a key: its owner)' },
  apiKeyId: { type: GraphQLID, description: 'the key that acted' },
  action: { type: GraphQLString, description: 'exact action, or a prefix ending with * (file.*)' },
  resourceType: { type: GraphQLString },
  resourceId: { type: GraphQLString },
  from: { type: GraphQLString, description: 'entries at or after this time (ISO 8601 date-time)' },
  to: { type: GraphQLString, description: 'entries before this time (ISO 8601 date-time)' },
};

export const auditPart: SchemaPart = {
  fields: {
    query: () => ({
      auditLog: adminOnly<unknown>({
        type: nn(AuditEntryConnection),
        description:
          'the company’s audit log, newest first, with GET /audit-log’s filters (cursors interchangeable with it)',
        args: { ...pageArgs, ...filterArgs },
        extensions: connectionComplexity,
        resolve: async (_s, args: PageArgs & FilterArgs, c: GraphQLContext) => {
          const filters = readFilters(args);
          const list = auditListName(filters);
          const page = readPage(c, list, args);
          const rows = await keysetRows(auditLogOf(c.actor, c.db, filters), page);
          const paged = toPage(c, list, page.limit, rows);
          return { ...paged, nodes: paged.nodes.map(presentAuditEntry) };
        },
      }),
    }),
  },
  types: [],
};

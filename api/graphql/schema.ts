/**
 * The GraphQL schema (issue 18), code first with graphql-js's own type classes; printed to
 * api/graphql/schema.graphql (test/api/graphqlSchema.test.ts keeps the file in sync). Read only: no
 * mutations. Every resolver reads through a DataLoader of api/graphql/context.ts, which calls a domain
 * function with the tenant scope and the files' visibility rule — the same rules as REST.
 *
 * Adding a capability (comments, notifications, billing, audit log) is a `SchemaPart` in parts.ts: its types,
 * its fields on Query / File / Version / Person, and its loaders made with `ctx.loader(name, make)`.
 */
import {
  GraphQLBoolean,
  GraphQLFloat,
  GraphQLID,
  GraphQLInt,
  GraphQLList,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
} from 'graphql';
import type { Comparison, File, FileVersion, Person, Report, SensitiveFinding } from '../../db/models';
import { companyOf } from '../../domain/identity/companies';
import { peoplePage, presentPersonTo } from '../../domain/identity/directory';
import { presentCompany } from '../../domain/identity/present';
import { visibleFilesPage } from '../../domain/files/batch';
import { presentFile, presentVersion } from '../../domain/files/present';
import { presentReport } from '../../domain/reports/present';
import { presentComparison } from '../../domain/comparisons/present';
import type { QualitySection } from '../../domain/rules/evaluate';
import { subscriptionOf } from '../../domain/plans/subscriptions';
import { loaders, type GraphQLContext } from './context';
import { SCHEMA_PARTS } from './parts';

import {
  adminOnly,
  connectionComplexity,
  connectionType,
  int,
  JSONScalar,
  list,
  nn,
  pageArgs,
  readPage,
  reqInt,
  reqStr,
  str,
  toPage,
  type Fields,
  type PageArgs,
} from './kit';

export { adminOnly, connectionComplexity, connectionType, JSONScalar, pageArgs, readPage, toPage };

// ---------------------------------------------------------------------------------------------------- types

const iso = (d: Date | string | null | undefined) => (d ? new Date(d).toISOString() : null);

export const PersonType: GraphQLObjectType = new GraphQLObjectType<Person, GraphQLContext>({
  name: 'Person',
  description:
    'A person of the caller’s company. Admins see every field; employees see the name and role of others ' +
    '(email, status and createdAt are null) and their own full record.',
  fields: () => ({
    id: { type: nn(GraphQLID), resolve: (p) => p.id },
    name: { ...reqStr, resolve: (p, _a, c) => presentPersonTo(c.actor, p).name },
    role: { ...reqStr, resolve: (p, _a, c) => presentPersonTo(c.actor, p).role },
    email: { ...str, resolve: (p, _a, c) => presentPersonTo(c.actor, p).email },
    status: { ...str, resolve: (p, _a, c) => presentPersonTo(c.actor, p).status },
    createdAt: { ...str, resolve: (p, _a, c) => presentPersonTo(c.actor, p).createdAt },
    ...partFields('person'),
  }),
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** An id argument that cannot name a row (not a UUID) finds nothing, like an unknown one. */
const isId = (id: string | null | undefined): id is string => !!id && UUID.test(id);

const personById = (id: string | null | undefined, c: GraphQLContext) =>
  isId(id) ? loaders.person(c).load(id) : null;

export const CompanyType = new GraphQLObjectType<Awaited<ReturnType<typeof companyOf>>, GraphQLContext>({
  name: 'Company',
  description:
    'The caller’s company. Employees see id, name and plan; status and createdAt are for admins (null otherwise).',
  fields: {
    id: { type: nn(GraphQLID) },
    name: reqStr,
    plan: str,
    status: { ...str, resolve: (co, _a, c) => (c.actor.role === 'admin' ? presentCompany(co).status : null) },
    createdAt: {
      ...str,
      resolve: (co, _a, c) => (c.actor.role === 'admin' ? presentCompany(co).createdAt : null),
    },
  },
});

export const PlanUsageType = new GraphQLObjectType({
  name: 'PlanUsage',
  description:
    'The company’s plan, its limits and the file quota used in the current billing period (as GET /subscriptions/me).',
  fields: {
    plan: str,
    limits: { type: JSONScalar },
    periodKey: reqStr,
    periodStart: reqStr,
    periodEnd: reqStr,
    filesUsed: reqInt,
    filesLimit: int,
  },
});

const RuleOutcomeType = new GraphQLObjectType({
  name: 'RuleOutcome',
  fields: {
    ruleId: reqStr,
    name: reqStr,
    kind: reqStr,
    column: str,
    dimension: str,
    severity: reqStr,
    status: reqStr,
    evaluatedUnits: { type: GraphQLFloat },
    failedUnits: { type: GraphQLFloat },
    failingRows: { type: new GraphQLList(nn(GraphQLFloat)) },
  },
});

const QualityType = new GraphQLObjectType<QualitySection>({
  name: 'Quality',
  description: 'The quality section of a report: the score, its dimensions and each rule’s outcome.',
  fields: {
    score: { type: GraphQLFloat },
    dimensions: { type: JSONScalar },
    rulesPassed: int,
    rulesEvaluated: int,
    failedErrorRules: int,
    rules: { type: list(RuleOutcomeType), resolve: (q) => q.rules ?? [] },
  },
});

const ReportFailureType = new GraphQLObjectType({
  name: 'ReportFailure',
  fields: { reason: reqStr, message: str },
});

interface ReportSource {
  version: FileVersion;
  report: Report;
}

const reportResult = (s: ReportSource, c: GraphQLContext) =>
  s.report.status === 'ready' ? loaders.reportResult(c).load(s.report) : Promise.resolve(null);

export const ReportType: GraphQLObjectType = new GraphQLObjectType<ReportSource, GraphQLContext>({
  name: 'Report',
  fields: () => ({
    id: { type: nn(GraphQLID), resolve: (s) => s.report.id },
    version: { type: nn(VersionType), resolve: (s) => s.version },
    build: { ...reqInt, resolve: (s) => s.report.build },
    status: { ...reqStr, description: 'queued, building, ready or failed', resolve: (s) => s.report.status },
    failure: { type: ReportFailureType, resolve: (s) => presentReport(s.version, s.report, null).failure },
    progress: { type: JSONScalar, resolve: (s) => presentReport(s.version, s.report, null).progress },
    queuedAt: { ...str, resolve: (s) => iso(s.report.queuedAt) },
    startedAt: { ...str, resolve: (s) => iso(s.report.startedAt) },
    finishedAt: { ...str, resolve: (s) => iso(s.report.finishedAt) },
    quality: {
      type: QualityType,
      resolve: async (s, _a, c) =>
        ((await reportResult(s, c))?.sections.quality as QualitySection | undefined) ?? null,
    },
    profile: { type: JSONScalar, resolve: async (s, _a, c) => (await reportResult(s, c))?.profile ?? null },
    sections: {
      type: JSONScalar,
      description: 'every section of the report (quality, sensitiveData, …) as GET …/report shows them',
      resolve: async (s, _a, c) => (await reportResult(s, c))?.sections ?? null,
    },
  }),
});

const SensitiveColumnType = new GraphQLObjectType({
  name: 'SensitiveColumn',
  fields: { name: reqStr, sheet: str, kinds: { type: list(GraphQLString) } },
});

const SensitiveDataType = new GraphQLObjectType<SensitiveFinding>({
  name: 'SensitiveData',
  description: 'The columns of a version flagged as personal or secret data (names and kinds, never values).',
  fields: {
    columns: { type: list(SensitiveColumnType), resolve: (f) => f.columns },
    foundAt: { ...reqStr, resolve: (f) => iso(f.createdAt) },
  },
});

export const ComparisonType: GraphQLObjectType = new GraphQLObjectType<Comparison, GraphQLContext>({
  name: 'Comparison',
  fields: () => ({
    id: { type: nn(GraphQLID) },
    file: { type: FileType, resolve: (x, _a, c) => loaders.file(c).load(x.fileId) },
    base: { type: VersionType, resolve: (x, _a, c) => loaders.version(c).load(x.baseVersionId) },
    target: { type: VersionType, resolve: (x, _a, c) => loaders.version(c).load(x.targetVersionId) },
    automatic: { type: nn(GraphQLBoolean) },
    status: { ...reqStr, description: 'queued, comparing, ready or failed' },
    keyColumns: { type: new GraphQLList(nn(GraphQLString)) },
    failureReason: str,
    failureMessage: str,
    queuedAt: { ...str, resolve: (x) => iso(x.queuedAt) },
    startedAt: { ...str, resolve: (x) => iso(x.startedAt) },
    finishedAt: { ...str, resolve: (x) => iso(x.finishedAt) },
    changeCount: { type: GraphQLFloat, resolve: (x) => presentComparison(x).result?.changeCount ?? null },
    summary: {
      type: JSONScalar,
      description: 'the result of a ready comparison, as GET /comparisons/{id} shows it',
      resolve: (x) => presentComparison(x).result,
    },
  }),
});

export const VersionType: GraphQLObjectType = new GraphQLObjectType<FileVersion, GraphQLContext>({
  name: 'Version',
  fields: () => ({
    id: { type: nn(GraphQLID) },
    file: { type: FileType, resolve: (v, _a, c) => loaders.file(c).load(v.fileId) },
    version: reqInt,
    originalName: reqStr,
    format: reqStr,
    contentType: reqStr,
    encoding: {
      type: GraphQLString,
      description:
        'CSV/TSV: utf-8, windows-1252, windows-1250, macintosh, utf-16le or utf-16be (as the REST version shows it); null for XLSX',
      resolve: (v) => presentVersion(v).encoding,
    },
    headerLine: {
      type: GraphQLInt,
      description:
        "CSV/TSV: the file's line the header is on (1 unless Excel's separator line, a title or notes come before it); null for XLSX",
      resolve: (v) => presentVersion(v).headerLine,
    },
    sizeBytes: { type: nn(GraphQLFloat), resolve: (v) => presentVersion(v).sizeBytes },
    rowCount: int,
    columnCount: int,
    createdAt: { ...reqStr, resolve: (v) => iso(v.createdAt) },
    uploadedBy: { type: PersonType, resolve: (v, _a, c) => personById(v.uploadedByPersonId, c) },
    report: {
      type: ReportType,
      description: 'null until the build created its row',
      resolve: async (v, _a, c) => {
        const report = await loaders.report(c).load(v.id);
        return report ? { version: v, report } : null;
      },
    },
    sensitiveData: {
      type: SensitiveDataType,
      description: 'null when the report found no personal or secret data (or has not run)',
      resolve: async (v, _a, c) => {
        const f = await loaders.finding(c).load(v.id);
        return f && f.columns.length > 0 ? f : null;
      },
    },
    comparison: {
      type: ComparisonType,
      description:
        'the automatic comparison with the previous version (null for version 1 or until it starts)',
      resolve: (v, _a, c) => (v.version > 1 ? loaders.automaticComparison(c).load(v.id) : null),
    },
    ...partFields('version'),
  }),
});

const VersionConnection = connectionType('Version', VersionType);

export const FileType: GraphQLObjectType = new GraphQLObjectType<File, GraphQLContext>({
  name: 'File',
  fields: () => ({
    id: { type: nn(GraphQLID) },
    originalName: reqStr,
    datasetId: { type: nn(GraphQLID) },
    visibility: { ...reqStr, description: 'private or company' },
    currentVersion: reqInt,
    createdAt: { ...reqStr, resolve: (f) => presentFile(f).createdAt },
    updatedAt: { ...reqStr, resolve: (f) => presentFile(f).updatedAt },
    uploadedBy: { type: PersonType, resolve: (f, _a, c) => personById(f.uploadedByPersonId, c) },
    versions: {
      type: nn(VersionConnection),
      description: 'newest first',
      args: pageArgs,
      extensions: connectionComplexity,
      resolve: async (f, args: PageArgs, c) => {
        const page = readPage(c, 'versions', args);
        const rows = await loaders.versionsPage(c, page.limit, page.after).load(f.id);
        return toPage(c, 'versions', page.limit, rows);
      },
    },
    version: {
      type: VersionType,
      args: { number: { type: nn(GraphQLInt) } },
      resolve: (f, { number }: { number: number }, c) =>
        loaders.versionByNumber(c).load({ fileId: f.id, version: number }),
    },
    latestVersion: {
      type: VersionType,
      resolve: (f, _a, c) => loaders.versionByNumber(c).load({ fileId: f.id, version: f.currentVersion }),
    },
    ...partFields('file'),
  }),
});

const FileConnection = connectionType('File', FileType);
const PersonConnection = connectionType('Person', PersonType);

function partFields(on: 'query' | 'file' | 'version' | 'person'): Fields {
  return Object.assign({}, ...SCHEMA_PARTS.map((p) => p.fields?.[on]?.() ?? {})) as Fields;
}

const QueryType = new GraphQLObjectType<unknown, GraphQLContext>({
  name: 'Query',
  fields: () => ({
    me: {
      type: nn(PersonType),
      description: 'the signed-in person',
      resolve: (_s, _a, c) => loaders.person(c).load(c.actor.personId),
    },
    company: { type: nn(CompanyType), resolve: (_s, _a, c) => companyOf(c.actor, c.db) },
    plan: {
      type: nn(PlanUsageType),
      resolve: (_s, _a, c) => subscriptionOf(c.db, c.actor.companyId, c.actor.companyPlan),
    },
    people: {
      type: nn(PersonConnection),
      description: 'the company’s people, newest first',
      args: pageArgs,
      extensions: connectionComplexity,
      resolve: async (_s, args: PageArgs, c) => {
        const page = readPage(c, 'people', args);
        const rows = await peoplePage(c.actor, c.db, page);
        for (const p of rows) loaders.person(c).prime(p.id, p);
        return toPage(c, 'people', page.limit, rows);
      },
    },
    person: {
      type: PersonType,
      args: { id: { type: nn(GraphQLID) } },
      resolve: (_s, { id }: { id: string }, c) => personById(id, c),
    },
    files: {
      type: nn(FileConnection),
      description: 'the files the caller may see, newest first (cursors interchangeable with GET /files)',
      args: pageArgs,
      extensions: connectionComplexity,
      resolve: async (_s, args: PageArgs, c) => {
        const page = readPage(c, 'files', args);
        const rows = await visibleFilesPage(c.actor, c.db, page);
        for (const f of rows) loaders.file(c).prime(f.id, f);
        return toPage(c, 'files', page.limit, rows);
      },
    },
    file: {
      type: FileType,
      description: 'null when it does not exist or the caller may not see it',
      args: { id: { type: nn(GraphQLID) } },
      resolve: (_s, { id }: { id: string }, c) => (isId(id) ? loaders.file(c).load(id) : null),
    },
    comparison: {
      type: ComparisonType,
      description: 'null when it does not exist or the caller may not see its file',
      args: { id: { type: nn(GraphQLID) } },
      resolve: (_s, { id }: { id: string }, c) => (isId(id) ? loaders.comparison(c).load(id) : null),
    },
    ...partFields('query'),
  }),
});

export const schema = new GraphQLSchema({
  query: QueryType,
  types: SCHEMA_PARTS.flatMap((p) => p.types ?? []),
});

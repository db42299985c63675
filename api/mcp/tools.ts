/**
 * The AI-agent endpoint's tool table (README "AI-agent endpoint"). Each tool stands for one REST route of the
 * route table: that route's access rule decides who is offered and may call the tool (api/middlewares/
 * authenticate.ts `authorize`, the same function the HTTP route runs), its schemas are the tool's input and
 * output schemas, and its handler answers (the same domain functions and presenters as GET /files & co.), unless
 * the entry names its own adapter (`run`, the base64 uploads). A capability adds its tools as entries here.
 */
import { BadRequestError, PayloadTooLargeError } from '../../common/errors';
import type { Config } from '../../common/config';
import type { Visibility } from '../../db/models';
import { presentFile, presentVersion } from '../../domain/files/present';
import { uploadFile, uploadTarget } from '../../domain/files/upload';
import type { AppContext } from '../context';
import { authorize, isAuthorized, principalOf } from '../middlewares/authenticate';
import { filesDeps } from '../routes/files/deps';
import { validateInput, type JsonSchema, type RouteSpec } from '../routing';
import { bodyAjv, compile, describeErrors } from '../validation';

export interface ToolEntry {
  name: string;
  description: string;
  /** The REST route this tool stands for: its access rule authorizes the tool, its schemas and handler serve it. */
  route: { method: RouteSpec['method']; path: string };
  /** Input JSON Schema; default: the route's path, query and body properties as one object. */
  input?: JsonSchema;
  /** Output JSON Schema (`structuredContent`); default: the route's success answer. */
  output?: JsonSchema;
  /** The tool's own adapter when the route's handler cannot serve it (an upload sent as base64). */
  run?: (ctx: AppContext, args: Record<string, unknown>) => Promise<unknown>;
}

/** Room for the JSON-RPC envelope and the other arguments around a base64 file. */
const ENVELOPE_BYTES = 64 * 1024;

/** The largest /mcp body: the upload limit in base64, plus the envelope (413 before reading beyond it). */
export function mcpBodyLimitBytes(config: Config): number {
  return Math.ceil(config.mcp.uploadMaxBytes / 3) * 4 + ENVELOPE_BYTES;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The file of an upload tool, decoded: 400 when it is not base64, 413 when it is over the limit. */
function decodeFile(config: Config, base64: string): Buffer {
  const text = base64.replace(/\s+/g, '');
  if (text.length % 4 !== 0 || !BASE64.test(text)) {
    throw new BadRequestError('arguments.contentBase64 must be base64 (RFC 4648, with padding)');
  }
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const size = (text.length / 4) * 3 - padding;
  if (size > config.mcp.uploadMaxBytes) {
    throw new PayloadTooLargeError(
      `the file is ${size} bytes: the AI-agent endpoint takes files of at most ${config.mcp.uploadMaxBytes} bytes (upload larger files with POST /files)`,
    );
  }
  return Buffer.from(text, 'base64');
}

const fileArguments = {
  fileName: {
    type: 'string',
    minLength: 1,
    maxLength: 255,
    description: 'the file name, e.g. sales.csv (the format is judged by the content)',
  },
  contentBase64: {
    type: 'string',
    description:
      'the spreadsheet (XLSX, CSV or TSV in UTF-8, Windows-1252 or UTF-16), base64-encoded; at most MCP_UPLOAD_MAX_BYTES decoded (10 MB by default)',
  },
} as const;

function validateArguments(schema: JsonSchema, args: Record<string, unknown>): void {
  const validate = compile(bodyAjv, schema);
  if (!validate(args)) {
    const problems = describeErrors('arguments', validate.errors ?? []);
    throw new BadRequestError(problems.length === 1 ? problems[0] : problems);
  }
}

const uploadFileInput = {
  type: 'object',
  additionalProperties: false,
  required: ['fileName', 'contentBase64'],
  properties: {
    ...fileArguments,
    visibility: {
      enum: ['private', 'company'],
      default: 'private',
      description: 'private: the uploader (and admins) only; company: everyone in the company',
    },
  },
} as const;

const uploadVersionInput = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'fileName', 'contentBase64'],
  properties: { id: { type: 'string', format: 'uuid', description: 'the file' }, ...fileArguments },
} as const;

/** An upload tool: the same domain command as POST /files (quota 402, versions 409, format 400), audited "via ai-agent". */
async function upload(ctx: AppContext, args: Record<string, unknown>, fileId?: string) {
  const deps = filesDeps(ctx);
  const actor = principalOf(ctx);
  // as in REST: a file the caller may not see is "not found" whatever else is wrong with the call
  if (fileId) await uploadTarget(actor, deps.knex, fileId);
  const content = decodeFile(ctx.deps.config, args.contentBase64 as string);
  const { file, version } = await uploadFile(deps, actor, {
    fileId,
    fileName: args.fileName as string,
    visibility: fileId ? undefined : ((args.visibility as Visibility | undefined) ?? 'private'),
    content,
    correlationId: ctx.state.correlationId,
    via: 'ai-agent',
  });
  return fileId ? presentVersion(version) : { ...presentFile(file), version: presentVersion(version) };
}

/** Every tool: one entry each (files, rules and plan; billing; comments, notifications and the audit log). */
export const TOOLS: readonly ToolEntry[] = [
  {
    name: 'list_files',
    description: 'Files the caller may see, newest first (cursor list: pass `nextCursor` back as `cursor`)',
    route: { method: 'get', path: '/files' },
  },
  { name: 'get_file', description: 'One file', route: { method: 'get', path: '/files/:id' } },
  {
    name: 'list_versions',
    description: 'Versions of a file, newest first (page-number list)',
    route: { method: 'get', path: '/files/:id/versions' },
  },
  {
    name: 'get_version',
    description: 'One version of a file',
    route: { method: 'get', path: '/files/:id/versions/:version' },
  },
  {
    name: 'preview_version',
    description: 'The first rows (at most `rows`, 20 by default) and the columns of a version',
    route: { method: 'get', path: '/files/:id/versions/:version/preview' },
  },
  {
    name: 'get_download_link',
    description: 'A short-lived signed link that downloads exactly this version',
    route: { method: 'get', path: '/files/:id/versions/:version/download-link' },
  },
  {
    name: 'upload_file',
    description:
      'Upload a new file (base64; it becomes version 1). Counts against the file quota like POST /files',
    route: { method: 'post', path: '/files' },
    input: uploadFileInput,
    run: async (ctx, args) => {
      validateArguments(uploadFileInput, args);
      return upload(ctx, args);
    },
  },
  {
    name: 'upload_version',
    description:
      'Upload a new version of a file (base64). Counts against the file quota like POST /files/{id}/versions',
    route: { method: 'post', path: '/files/:id/versions' },
    input: uploadVersionInput,
    run: async (ctx, args) => {
      validateArguments(uploadVersionInput, args);
      return upload(ctx, args, args.id as string);
    },
  },
  {
    name: 'change_visibility',
    description: 'Change who can see a file (its uploader or an admin): private or company',
    route: { method: 'patch', path: '/files/:id' },
  },
  {
    name: 'get_report',
    description: 'The report of a version: status, progress, failure reason, and the profile when ready',
    route: { method: 'get', path: '/files/:id/versions/:version/report' },
  },
  {
    name: 'get_latest_report',
    description: "The report of the file's newest version",
    route: { method: 'get', path: '/files/:id/report' },
  },
  {
    name: 'rebuild_report',
    description: 'Build the report of a version again (refused with 409 while a build is queued or building)',
    route: { method: 'post', path: '/files/:id/versions/:version/report/rebuild' },
  },
  {
    name: 'get_version_comparison',
    description: 'The automatic comparison of a version with the previous one',
    route: { method: 'get', path: '/files/:id/versions/:version/comparison' },
  },
  {
    name: 'get_comparison',
    description: 'A comparison: status, progress, failure reason, summary when ready',
    route: { method: 'get', path: '/comparisons/:id' },
  },
  {
    name: 'list_comparison_changes',
    description: 'The row changes of a ready comparison, page by page',
    route: { method: 'get', path: '/comparisons/:id/changes' },
  },
  {
    name: 'request_comparison',
    description: 'Compare two versions of one file (key columns optional); run by the worker',
    route: { method: 'post', path: '/comparisons' },
  },
  {
    name: 'list_rules',
    description: "The company's quality rules (page-number list)",
    route: { method: 'get', path: '/rules' },
  },
  { name: 'get_rule', description: 'One quality rule', route: { method: 'get', path: '/rules/:id' } },
  {
    name: 'get_plan_and_quota',
    description: "The company's plan, its limits and the file quota used in this billing period",
    route: { method: 'get', path: '/subscriptions/me' },
  },
  // billing (issue 16): billing:read
  {
    name: 'get_running_bill',
    description:
      'The running bill of the current period: plan segments, line items and total in cents, as the invoice would be if the period ended now',
    route: { method: 'get', path: '/billing/current' },
  },
  {
    name: 'list_invoices',
    description: "The company's invoices, newest period first (page-number list)",
    route: { method: 'get', path: '/invoices' },
  },
  { name: 'get_invoice', description: 'One invoice', route: { method: 'get', path: '/invoices/:id' } },
  {
    name: 'get_invoice_document_link',
    description: "A short-lived signed link to the invoice's PDF",
    route: { method: 'get', path: '/invoices/:id/document' },
  },
  // comments (issue 15): reading only — the routes that write comments accept no key (rule 12), so no tool
  {
    name: 'list_comments',
    description: 'The comments of a file, oldest first (cursor list: pass `nextCursor` back as `cursor`)',
    route: { method: 'get', path: '/files/:id/comments' },
  },
  // notifications (issue 15): notifications:read, the caller's own (a key: its owner's)
  {
    name: 'list_notifications',
    description:
      "The caller's own notifications, newest first (cursor list; `unread: true` for the unread ones only)",
    route: { method: 'get', path: '/notifications' },
  },
  {
    name: 'get_unread_notification_count',
    description: "How many of the caller's notifications are unread",
    route: { method: 'get', path: '/notifications/unread-count' },
  },
  {
    name: 'mark_notification_read',
    description: "Mark one of the caller's notifications read (again: no change); audited",
    route: { method: 'post', path: '/notifications/:id/read' },
  },
  {
    name: 'mark_all_notifications_read',
    description: 'Mark every unread notification of the caller read; answers how many were marked; audited',
    route: { method: 'post', path: '/notifications/read-all' },
  },
  // the audit log (issue 15): audit:read (sessions: admins)
  {
    name: 'search_audit_log',
    description:
      "The company's audit log, newest first (cursor list); filters: actorId, apiKeyId, action (exact or `prefix*`), resourceType, resourceId, from, to",
    route: { method: 'get', path: '/audit-log' },
  },
];

/** A tool with its route found in the app's route table and its schemas worked out. */
export interface ResolvedTool {
  entry: ToolEntry;
  spec: RouteSpec;
  access: Exclude<RouteSpec['access'], { public: true }>;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
}

type ObjectSchema = { properties?: Record<string, unknown>; required?: readonly string[] };

/** The route's path, query and body properties as one object schema. */
function mergedInput(spec: RouteSpec): JsonSchema {
  const parts = [spec.params, spec.query, spec.body] as Array<ObjectSchema | undefined>;
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const part of parts) {
    Object.assign(properties, part?.properties ?? {});
    required.push(...(part === spec.query ? [] : (part?.required ?? [])));
  }
  return {
    type: 'object',
    additionalProperties: false,
    properties,
    ...(required.length ? { required } : {}),
  };
}

function successSchema(spec: RouteSpec): JsonSchema | undefined {
  const status = Object.keys(spec.responses)
    .map(Number)
    .find((s) => s >= 200 && s < 300);
  const schema = status === undefined ? undefined : spec.responses[status].schema;
  return schema && schema.type === 'object' ? schema : undefined;
}

const resolvedOf = new WeakMap<readonly RouteSpec[], Map<string, ResolvedTool>>();

/** The tools, resolved against a route table (once per table). A tool naming no route fails loudly. */
export function resolveTools(routeTable: readonly RouteSpec[]): Map<string, ResolvedTool> {
  let resolved = resolvedOf.get(routeTable);
  if (resolved) return resolved;
  resolved = new Map();
  for (const entry of TOOLS) {
    const spec = routeTable.find((r) => r.method === entry.route.method && r.path === entry.route.path);
    if (!spec) throw new Error(`tool ${entry.name}: no route ${entry.route.method} ${entry.route.path}`);
    if (spec.access.public) throw new Error(`tool ${entry.name}: a public route needs no tool`);
    resolved.set(entry.name, {
      entry,
      spec,
      access: spec.access,
      inputSchema: entry.input ?? mergedInput(spec),
      outputSchema: entry.output ?? successSchema(spec),
    });
  }
  resolvedOf.set(routeTable, resolved);
  return resolved;
}

/** The tools the caller's scopes (a key) or role (a session) open: each route's own access rule. */
export function toolsFor(ctx: AppContext): ResolvedTool[] {
  const principal = principalOf(ctx);
  return [...resolveTools(ctx.routeTable).values()].filter((tool) =>
    isAuthorized(tool.access, principal, tool.spec.method),
  );
}

/** The route's handler with arguments split into path, query and body as the route's schemas name them. */
export async function callRoute(
  ctx: AppContext,
  spec: RouteSpec,
  args: Record<string, unknown>,
): Promise<unknown> {
  const inParams = (spec.params as ObjectSchema | undefined)?.properties ?? {};
  const inQuery = (spec.query as ObjectSchema | undefined)?.properties ?? {};
  // own properties only, into objects without a prototype: an argument named `__proto__` or
  // `constructor` is an unknown field like any other
  const raw = {
    params: Object.create(null) as Record<string, unknown>,
    query: Object.create(null) as Record<string, unknown>,
    body: Object.create(null) as Record<string, unknown>,
  };
  for (const [name, value] of Object.entries(args)) {
    if (Object.hasOwn(inParams, name)) raw.params[name] = value;
    else if (Object.hasOwn(inQuery, name) || !spec.body) raw.query[name] = value;
    else raw.body[name] = value;
  }
  const input = validateInput(spec, { ...raw, body: spec.body ? raw.body : undefined });
  const reply = await spec.handler(ctx, input);
  return reply.body ?? {};
}

/** Runs a tool for the caller: authorized as its route is, then its adapter or the route's handler. */
export async function runTool(
  ctx: AppContext,
  tool: ResolvedTool,
  args: Record<string, unknown>,
): Promise<unknown> {
  authorize(tool.access, principalOf(ctx), tool.spec.method);
  return tool.entry.run ? tool.entry.run(ctx, args) : callRoute(ctx, tool.spec, args);
}

/**
 * Reports and comparisons as MCP resources (README "AI-agent endpoint"): `report://<fileId>/v<version>` and
 * `comparison://<comparisonId>`, listed with the files domain's visibility rule and read through the same
 * routes (and access rules) as GET /files/{id}/versions/{version}/report and GET /comparisons/{id}.
 */
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { visibleComparisons } from '../../domain/comparisons/queries';
import { visibleReports } from '../../domain/reports/queries';
import type { AppContext } from '../context';
import { authorize, isAuthorized, principalOf } from '../middlewares/authenticate';
import type { RouteSpec } from '../routing';
import { callRoute } from './tools';

const PAGE = 100;
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const REPORT_URI = new RegExp(`^report://(${UUID})/v([0-9]+)$`, 'i');
const COMPARISON_URI = new RegExp(`^comparison://(${UUID})$`, 'i');

export const RESOURCE_TEMPLATES = [
  {
    uriTemplate: 'report://{fileId}/v{version}',
    name: 'report',
    description: 'The report of a version of a file (as get_report answers)',
    mimeType: 'application/json',
  },
  {
    uriTemplate: 'comparison://{comparisonId}',
    name: 'comparison',
    description: 'A comparison of two versions (as get_comparison answers)',
    mimeType: 'application/json',
  },
];

function routeOf(ctx: AppContext, method: RouteSpec['method'], path: string): RouteSpec {
  const spec = ctx.routeTable.find((r) => r.method === method && r.path === path);
  if (!spec) throw new Error(`no route ${method} ${path}`);
  return spec;
}

const reportRoute = (ctx: AppContext) => routeOf(ctx, 'get', '/files/:id/versions/:version/report');
const comparisonRoute = (ctx: AppContext) => routeOf(ctx, 'get', '/comparisons/:id');

function mayRead(ctx: AppContext, spec: RouteSpec): boolean {
  return !spec.access.public && isAuthorized(spec.access, principalOf(ctx), spec.method);
}

/**
 * One page of resources: the reports first, then the comparisons. The cursor names the list and the
 * position in it (`r:<n>`, `c:<n>`; opaque to clients); a caller whose scopes do not open the report
 * and comparison routes lists nothing.
 */
export async function listResources(ctx: AppContext, cursor: string | undefined) {
  const match = /^([rc]):([0-9]{1,9})$/.exec(cursor ?? '');
  let list = match ? match[1] : 'r';
  let offset = match ? Number(match[2]) : 0;
  const actor = principalOf(ctx);
  const knex = ctx.deps.knex;
  const resources: Array<{ uri: string; name: string; description: string; mimeType: string }> = [];
  if (list === 'r') {
    if (mayRead(ctx, reportRoute(ctx))) {
      const rows = await visibleReports(actor, knex, { offset, limit: PAGE + 1 });
      for (const row of rows.slice(0, PAGE)) {
        resources.push({
          uri: `report://${row.fileId}/v${row.version}`,
          name: `report of ${row.originalName} v${row.version}`,
          description: `status: ${row.status}`,
          mimeType: 'application/json',
        });
      }
      if (rows.length > PAGE) return { resources, nextCursor: `r:${offset + PAGE}` };
    }
    list = 'c';
    offset = 0;
  }
  const room = PAGE - resources.length;
  if (room === 0) return { resources, nextCursor: 'c:0' };
  if (mayRead(ctx, comparisonRoute(ctx))) {
    const rows = await visibleComparisons(actor, knex, { offset, limit: room + 1 });
    for (const row of rows.slice(0, room)) {
      resources.push({
        uri: `comparison://${row.id}`,
        name: `comparison of v${row.baseVersion} and v${row.targetVersion}`,
        description: `status: ${row.status}${row.automatic ? ' (automatic)' : ''}`,
        mimeType: 'application/json',
      });
    }
    if (rows.length > room) return { resources, nextCursor: `c:${offset + room}` };
  }
  return { resources };
}

/** Reads one resource through its route (authorized as the route is); an unknown URI is "not found". */
export async function readResource(ctx: AppContext, uri: string) {
  const report = REPORT_URI.exec(uri);
  const comparison = COMPARISON_URI.exec(uri);
  let body: unknown;
  if (report) {
    body = await callRouteAuthorized(ctx, reportRoute(ctx), { id: report[1], version: Number(report[2]) });
  } else if (comparison) {
    body = await callRouteAuthorized(ctx, comparisonRoute(ctx), { id: comparison[1] });
  } else {
    throw new McpError(ErrorCode.InvalidParams, `unknown resource ${uri}`);
  }
  return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(body) }] };
}

async function callRouteAuthorized(ctx: AppContext, spec: RouteSpec, args: Record<string, unknown>) {
  if (!spec.access.public) authorize(spec.access, principalOf(ctx), spec.method);
  return callRoute(ctx, spec, args);
}

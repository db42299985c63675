import Koa from 'koa';
import Router from '@koa/router';
import type { AppContext, AppDeps, AppState } from './context';
import { noStore } from './middlewares/cacheControl';
import { clientAddress } from './middlewares/clientAddress';
import { correlation } from './middlewares/correlation';
import { errors } from './middlewares/errors';
import { idempotency } from './middlewares/idempotency';
import { jsonBody } from './middlewares/body';
import { methodNotAllowed } from './middlewares/methods';
import { authenticate } from './middlewares/authenticate';
import { planGuard } from './middlewares/plan';
import { countBucket, rateLimit, RequestCounters } from './middlewares/rateLimit';
import { findRoute, mountRoutes, type RouteMiddlewareFactory, type RouteSpec } from './routing';
import { routes as allRoutes } from './routes';

export interface AppOptions {
  /** Extra routes (tests only). */
  extraRoutes?: readonly RouteSpec[];
  /**
   * Leave out the request budget and Idempotency-Key machinery (the benchmark's comparison app only;
   * never in a served process).
   */
  withoutPlatformMachinery?: boolean;
  /** Idempotency-Key claims' lease in seconds (tests only; default IDEMPOTENCY_LEASE_SECONDS). */
  idempotencyLeaseSeconds?: number;
}

export type ServiceApp = Koa<AppState> & { router: Router<AppState> };

/** Builds the Koa app from its dependencies. It does not listen: api/server.ts does, tests use app.callback(). */
export function createApp(deps: AppDeps, options: AppOptions = {}): ServiceApp {
  const app = new Koa<AppState>();
  app.silent = true; // errors are logged by the error middleware, with the correlation id
  const routeTable: readonly RouteSpec[] = [...allRoutes, ...(options.extraRoutes ?? [])];
  Object.assign(app.context as unknown as AppContext, { deps, routeTable });
  const machinery = !options.withoutPlatformMachinery;

  const router = new Router<AppState>();
  // The chain every route runs, in this order, before validation and its handler:
  // authenticate and authorize (route table `access`), a signed-in route's bucket (counted once the caller is
  // allowed), the plan guard (`needsPlan`), then Idempotency-Key. The request budget is counted earlier, at
  // app level (below), so that every answer carries its headers.
  const idempotencyOf: RouteMiddlewareFactory = (spec) =>
    idempotency(spec, { leaseSeconds: options.idempotencyLeaseSeconds });
  const routeChain: RouteMiddlewareFactory[] = [
    authenticate,
    countBucket,
    planGuard,
    ...(machinery ? [idempotencyOf] : []),
  ];
  mountRoutes(router, routeTable, routeChain);

  app.use(noStore() as Koa.Middleware<AppState>);
  app.use(correlation() as Koa.Middleware<AppState>);
  app.use(errors() as Koa.Middleware<AppState>);
  app.use(clientAddress(deps.config.trustProxyHops) as Koa.Middleware<AppState>);
  if (machinery) {
    // before the body is parsed and the route runs: a 429 costs nothing, and 404s, 401s and body errors
    // are counted and carry the X-RateLimit-* headers too
    app.use(rateLimit(router, new RequestCounters(deps.knex)) as Koa.Middleware<AppState>);
  }
  const { config } = deps;
  const bodyLimit = (ctx: AppContext) =>
    findRoute(router, ctx.method, ctx.path)?.bodyLimitBytes?.(config) ?? config.jsonBodyLimitBytes;
  app.use(jsonBody(bodyLimit) as Koa.Middleware<AppState>);
  app.use(methodNotAllowed(router) as Koa.Middleware<AppState>);
  app.use(router.routes());
  return Object.assign(app, { router });
}

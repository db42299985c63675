import Koa from 'koa';
import Router from '@koa/router';
import type { AppContext, AppDeps, AppState } from './context';
import { correlation } from './middlewares/correlation';
import { errors } from './middlewares/errors';
import { jsonBody } from './middlewares/body';
import { authenticate } from './middlewares/authenticate';
import { mountRoutes, type RouteMiddlewareFactory, type RouteSpec } from './routing';
import { routes as allRoutes } from './routes';

export interface AppOptions {
  /** Extra routes (tests only). */
  extraRoutes?: readonly RouteSpec[];
}

/** Builds the Koa app from its dependencies. It does not listen: api/server.ts does, tests use app.callback(). */
export function createApp(deps: AppDeps, options: AppOptions = {}): Koa<AppState> {
  const app = new Koa<AppState>();
  app.silent = true; // errors are logged by the error middleware, with the correlation id
  (app.context as unknown as AppContext).deps = deps;

  const router = new Router<AppState>();
  // The chain every route runs, in this order, before validation and its handler:
  // authenticate and authorize (route table `access`), then rate limits, then Idempotency-Key.
  const routeChain: RouteMiddlewareFactory[] = [authenticate];
  mountRoutes(router, [...allRoutes, ...(options.extraRoutes ?? [])], routeChain);

  app.use(correlation() as Koa.Middleware<AppState>);
  app.use(errors() as Koa.Middleware<AppState>);
  app.use(jsonBody(deps.config.jsonBodyLimitBytes) as Koa.Middleware<AppState>);
  app.use(router.routes());
  app.use(router.allowedMethods({ throw: true }));
  return app;
}

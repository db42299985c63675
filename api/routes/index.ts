import type { RouteSpec } from '../routing';
import { docsRoutes } from './docs';
import { subscriptionRoutes } from './subscriptions';
import { systemRoutes } from './system';

/** The route table: every route of the API, in one list (OpenAPI and authorization read it too). */
export const routes = [
  ...systemRoutes,
  ...docsRoutes,
  ...subscriptionRoutes,
] as const satisfies readonly RouteSpec[];

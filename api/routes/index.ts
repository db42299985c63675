import type { RouteSpec } from '../routing';
import { apiKeyRoutes } from './apiKeys';
import { authRoutes } from './auth';
import { docsRoutes } from './docs';
import { subscriptionRoutes } from './subscriptions';
import { systemRoutes } from './system';

/**
 * The route table: every route of the API, in one list (OpenAPI and authorization read it too). It keeps
 * each route's literal type, so test/helpers/client.ts types requests and answers from the schemas.
 */
export const routes = [
  ...systemRoutes,
  ...docsRoutes,
  ...authRoutes,
  ...apiKeyRoutes,
  ...subscriptionRoutes,
] as const satisfies readonly RouteSpec[];

import type { RouteSpec } from '../routing';
import { apiKeyRoutes } from './apiKeys';
import { authRoutes } from './auth';
import { filesRoutes } from './files';
import { systemRoutes } from './system';

/** The route table: every route of the API, in one list (OpenAPI and authorization read it too). */
export const routes: readonly RouteSpec[] = [...systemRoutes, ...authRoutes, ...apiKeyRoutes, ...filesRoutes];

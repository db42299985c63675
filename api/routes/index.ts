import type { RouteSpec } from '../routing';
import { accountRoutes } from './accounts';
import { apiKeyRoutes } from './apiKeys';
import { companyRoutes } from './companies';
import { peopleRoutes } from './people';
import { authRoutes } from './auth';
import { demoRoutes } from './demo';
import { filesRoutes } from './files';
import { oauthRoutes } from './oauth';
import { systemRoutes } from './system';

/** The route table: every route of the API, in one list (OpenAPI and authorization read it too). */
export const routes: readonly RouteSpec[] = [
  ...systemRoutes,
  ...authRoutes,
  ...oauthRoutes,
  ...accountRoutes,
  ...apiKeyRoutes,
  ...peopleRoutes,
  ...companyRoutes,
  ...demoRoutes,
  ...filesRoutes,
];

import type { RouteSpec } from '../routing';
import { accountRoutes } from './accounts';
import { apiKeyRoutes } from './apiKeys';
import { companyRoutes } from './companies';
import { outgoingWebhookRoutes } from './outgoing-webhooks';
import { peopleRoutes } from './people';
import { authRoutes } from './auth';
import { systemRoutes } from './system';

/** The route table: every route of the API, in one list (OpenAPI and authorization read it too). */
export const routes: readonly RouteSpec[] = [
  ...systemRoutes,
  ...authRoutes,
  ...accountRoutes,
  ...apiKeyRoutes,
  ...peopleRoutes,
  ...companyRoutes,
  ...outgoingWebhookRoutes,
];

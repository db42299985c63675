import type { RouteSpec } from '../routing';
import { accountRoutes } from './accounts';
import { analyticsRoutes } from './analytics';
import { graphqlRoutes } from './graphql';
import { apiKeyRoutes } from './apiKeys';
import { authRoutes } from './auth';
import { companyRoutes } from './companies';
import { comparisonRoutes } from './comparisons';
import { demoRoutes } from './demo';
import { docsRoutes } from './docs';
import { filesRoutes } from './files';
import { mcpRoutes } from './mcp';
import { oauthRoutes } from './oauth';
import { outgoingWebhookRoutes } from './outgoing-webhooks';
import { peopleRoutes } from './people';
import { reportRoutes } from './reports';
import { rulesRoutes } from './rules';
import { subscriptionRoutes } from './subscriptions';
import { systemRoutes } from './system';
import { billingRoutes } from './billing';
import { commentRoutes } from './comments';
import { notificationRoutes } from './notifications';
import { auditRoutes } from './audit';

const table = [
  ...systemRoutes,
  ...docsRoutes,
  ...authRoutes,
  ...oauthRoutes,
  ...accountRoutes,
  ...apiKeyRoutes,
  ...peopleRoutes,
  ...companyRoutes,
  ...demoRoutes,
  ...subscriptionRoutes,
  ...filesRoutes,
  ...reportRoutes,
  ...comparisonRoutes,
  ...outgoingWebhookRoutes,
  ...rulesRoutes,
  ...mcpRoutes,
  ...billingRoutes,
  ...analyticsRoutes,
  ...graphqlRoutes,
  ...commentRoutes,
  ...notificationRoutes,
  ...auditRoutes,
] as const satisfies readonly RouteSpec[];

/**
 * Every route with its literal type (paths, schemas): test/helpers/client.ts types requests and answers
 * from the same schemas that validate them.
 */
export type RouteTable = typeof table;

/** The route table: every route of the API, in one list (OpenAPI and authorization read it too). */
export const routes: readonly RouteSpec[] = table;

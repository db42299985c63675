import type { RouteSpec } from '../routing';
import { outgoingWebhookRoutes } from './outgoing-webhooks';
import { systemRoutes } from './system';

/** The route table: every route of the API, in one list (OpenAPI and authorization read it too). */
export const routes: readonly RouteSpec[] = [...systemRoutes, ...outgoingWebhookRoutes];

/** Bundle entry for the worker: every workflow is exported from here. */
export { outboxDispatcherWorkflow } from './outboxDispatcher';
export { reportWorkflow } from './report';

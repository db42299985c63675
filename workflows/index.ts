/** Bundle entry for the worker: every workflow is exported from here. */
export { outboxDispatcherWorkflow } from './outboxDispatcher';
export { reportWorkflow } from './report';
export { comparisonWorkflow } from './comparison';
export { webhookBatchWorkflow } from './webhookBatch';
export { webhookDeliveryWorkflow } from './webhookDelivery';
export { webhookDeliveryRetentionWorkflow } from './webhookRetention';
export { fileOrphanSweepWorkflow } from './fileOrphanSweep';
export { billingPeriodWorkflow, billingScheduleWorkflow } from './billing';
export { notificationRetentionWorkflow } from './notificationRetention';
export { auditRetentionWorkflow } from './auditRetention';

/**
 * The contract of the collaboration workflows (issue 15): the retention workflows of notifications and of
 * audit entries, started by their Temporal Schedules (worker/worker.ts). Sandbox-safe: names only.
 */
export const NOTIFICATION_RETENTION_WORKFLOW = 'notificationRetentionWorkflow';
export const AUDIT_RETENTION_WORKFLOW = 'auditRetentionWorkflow';

/**
 * The kinds of notification (issue 15), each with who receives it and the fields of its `data` (ids,
 * numbers and codes only — never a cell value, a comment's text or a file's content). The README's
 * "Notifications" section is this table in prose; test/domain/notifications/notify.test.ts walks it.
 */
export const NOTIFICATION_KINDS = {
  /** someone commented on a file the recipient uploaded (not their own comment) */
  'comment.on_your_file': { to: 'the uploader of the file', data: ['fileId', 'commentId', 'version'] },
  /** someone mentioned the recipient in a comment on a file the recipient can see */
  'comment.mention': { to: 'the person mentioned', data: ['fileId', 'commentId', 'version'] },
  /** the report of a version the recipient uploaded is ready */
  'report.ready': { to: 'the uploader of the version', data: ['fileId', 'version', 'reportId'] },
  /** the report of a version the recipient uploaded failed for good */
  'report.failed': {
    to: 'the uploader of the version',
    data: ['fileId', 'version', 'reportId', 'reason'],
  },
  /** error rules failed on a version of a file the recipient uploaded */
  'rules.failed': {
    to: 'the uploader of the version',
    data: ['fileId', 'version', 'failedRuleCount', 'qualityScore'],
  },
  /** a report found personal or secret data in a version */
  'sensitive_data.found': {
    to: 'the uploader of the version and the admins',
    data: ['fileId', 'version', 'columnCount'],
  },
  /** the company reached 80% or 100% of its file quota for the period */
  'quota.threshold': {
    to: 'the admins',
    data: ['threshold', 'periodKey', 'filesUsed', 'filesLimit'],
  },
  /** an outgoing webhook endpoint was disabled by the service (410, or failures in a row) */
  'webhook_endpoint.disabled': { to: 'the admins', data: ['endpointId', 'reason'] },
  /** an invoice was issued (billing, issue 16, calls notifyInvoiceFinalized) */
  'invoice.finalized': {
    to: 'the admins',
    data: ['invoiceId', 'totalCents', 'periodStart', 'periodEnd'],
  },
  /** a person the recipient invited accepted the invitation */
  'invitation.accepted': { to: 'the person who invited them', data: ['personId'] },
} as const;

export type NotificationKind = keyof typeof NOTIFICATION_KINDS;
export const NOTIFICATION_KIND_NAMES = Object.keys(NOTIFICATION_KINDS) as NotificationKind[];

/** Notifications older than this are removed by the retention Schedule. */
export const NOTIFICATION_RETENTION_DAYS = 90;

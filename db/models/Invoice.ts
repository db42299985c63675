import { TenantModel } from './base';

/** The states of an invoice: the values invoices_status_check allows (README "Billing"). */
export const INVOICE_STATUSES = ['finalized', 'void'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

/** One invoice: one per company and billing period (domain/billing). */
export class Invoice extends TenantModel {
  static override tableName = 'invoices';
  static override jsonAttributes: string[] = ['lines', 'segments'];

  sequence!: number;
  number!: string;
  periodKey!: string;
  periodStart!: Date;
  periodEnd!: Date;
  status!: InvoiceStatus;
  currency!: string;
  /** bigint comes back from pg as a string */
  subtotalCents!: number | string;
  totalCents!: number | string;
  lines!: unknown[];
  segments!: unknown[];
  filesUsed!: number;
  companyName!: string;
  documentKey!: string | null;
  workflowId!: string | null;
  issuedAt!: Date;
}

/** One row of the plan history (plan_changes, written by a trigger on companies). */
export class PlanChange extends TenantModel {
  static override tableName = 'planChanges';
  static override get hasUpdatedAt(): boolean {
    return false;
  }

  plan!: string | null;
  effectiveAt!: Date;
}

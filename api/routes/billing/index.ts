import { currentBill, getInvoice, invoiceDocumentLink, listInvoices } from '../../../domain/billing/queries';
import { presentBill } from '../../../domain/billing/present';
import { principalOf } from '../../middlewares/authenticate';
import { route } from '../../routing';
import {
  pageEnvelopeSchema,
  pageQuerySchema,
  signedLinkQuery,
  signedLinkResponse,
  uuidParams,
} from '../../schemas';

const TAG = 'Billing';
/** billing:read — admins' sessions, and keys holding the scope (employees 403) */
const billingRead = { roles: ['admin'], keyScope: 'billing:read' } as const;

const lineSchema = {
  type: 'object',
  required: ['kind', 'description', 'plan', 'quantity', 'unitCents', 'amountCents'],
  properties: {
    kind: {
      enum: ['plan', 'excess_files'],
      description: 'plan fee (prorated by the second) or files over quota',
    },
    description: { type: 'string' },
    plan: { enum: ['free', 'basic', 'premium'] },
    start: { type: 'string', format: 'date-time', description: 'plan lines: the segment start' },
    end: { type: 'string', format: 'date-time', description: 'plan lines: the segment end (exclusive)' },
    seconds: { type: 'integer', description: 'plan lines: seconds on the plan' },
    periodSeconds: { type: 'integer', description: 'plan lines: seconds in the period' },
    quantity: { type: 'integer', minimum: 0 },
    unitCents: { type: 'integer', description: 'monthly price, or price per excess file' },
    amountCents: { type: 'integer', minimum: 0 },
  },
} as const;

const segmentSchema = {
  type: 'object',
  required: ['plan', 'start', 'end', 'seconds'],
  properties: {
    plan: { enum: ['free', 'basic', 'premium', null], description: 'null: no plan chosen in that time' },
    start: { type: 'string', format: 'date-time' },
    end: { type: 'string', format: 'date-time' },
    seconds: { type: 'integer' },
  },
} as const;

const billSchema = {
  type: 'object',
  required: [
    'periodKey',
    'periodStart',
    'periodEnd',
    'asOf',
    'segments',
    'filesUsed',
    'lines',
    'subtotalCents',
    'totalCents',
    'currency',
  ],
  properties: {
    periodKey: { type: 'string', description: 'the billing period (calendar month, UTC), e.g. 2026-11' },
    periodStart: { type: 'string', format: 'date-time' },
    periodEnd: { type: 'string', format: 'date-time', description: 'exclusive' },
    asOf: {
      type: 'string',
      format: 'date-time',
      description: 'the bill as if the period ended at this time',
    },
    segments: { type: 'array', items: segmentSchema },
    filesUsed: { type: 'integer' },
    lines: { type: 'array', items: lineSchema },
    subtotalCents: { type: 'integer' },
    totalCents: { type: 'integer' },
    currency: { type: 'string', description: 'ISO 4217 (USD, as the plan prices)' },
  },
} as const;

const invoiceSchema = {
  type: 'object',
  required: [
    'id',
    'number',
    'status',
    'periodKey',
    'periodStart',
    'periodEnd',
    'lines',
    'subtotalCents',
    'totalCents',
    'currency',
    'issuedAt',
  ],
  properties: {
    id: { type: 'string', format: 'uuid' },
    number: {
      type: 'string',
      description:
        'per company, sequential without gaps: <year of the period start>-<sequence, 6 digits>, e.g. 2026-000001',
    },
    status: {
      enum: ['finalized', 'void'],
      description: 'finalized: issued and owed; void: cancelled by an operator (its number stays used)',
    },
    periodKey: { type: 'string' },
    periodStart: { type: 'string', format: 'date-time' },
    periodEnd: { type: 'string', format: 'date-time', description: 'exclusive' },
    segments: { type: 'array', items: segmentSchema },
    filesUsed: { type: 'integer' },
    lines: { type: 'array', items: lineSchema },
    subtotalCents: { type: 'integer' },
    totalCents: { type: 'integer' },
    currency: { type: 'string' },
    issuedAt: { type: 'string', format: 'date-time' },
    documentAvailable: {
      type: 'boolean',
      description: 'the PDF is stored (else it is rendered on first request)',
    },
  },
} as const;

export const billingRoutes = [
  route({
    method: 'get',
    path: '/billing/current',
    summary: 'The running bill of the current period (what its invoice would be if the period ended now)',
    tag: TAG,
    access: billingRead,
    responses: { 200: { description: 'the running bill', schema: billSchema } },
    handler: async (ctx) => ({ body: presentBill(await currentBill(ctx.deps.knex, principalOf(ctx))) }),
  }),
  route({
    method: 'get',
    path: '/invoices',
    summary: "The company's invoices, newest period first (page-number list)",
    tag: TAG,
    access: billingRead,
    query: pageQuerySchema,
    responses: { 200: { description: 'page-number list', schema: pageEnvelopeSchema(invoiceSchema) } },
    handler: async (ctx, { query }: { query: { page?: number; limit?: number } }) => ({
      body: await listInvoices(ctx.deps.knex, principalOf(ctx), query),
    }),
  }),
  route({
    method: 'get',
    path: '/invoices/:id',
    summary: 'One invoice (another company’s: 404)',
    tag: TAG,
    access: billingRead,
    params: uuidParams,
    responses: {
      200: { description: 'the invoice', schema: invoiceSchema },
      404: { description: 'not found' },
    },
    handler: async (ctx, { params }: { params: { id: string } }) => ({
      body: await getInvoice(ctx.deps.knex, principalOf(ctx), params.id),
    }),
  }),
  route({
    method: 'get',
    path: '/invoices/:id/document',
    summary: "A short-lived signed link to the invoice's PDF",
    tag: TAG,
    access: billingRead,
    params: uuidParams,
    query: signedLinkQuery,
    responses: {
      200: signedLinkResponse,
      404: { description: 'not found' },
    },
    handler: async (ctx, { params, query }: { params: { id: string }; query: { expiresIn?: number } }) => ({
      body: await invoiceDocumentLink(ctx.deps, principalOf(ctx), params.id, query.expiresIn),
    }),
  }),
];

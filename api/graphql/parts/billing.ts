/**
 * Billing in the GraphQL schema (issue 16 through issue 18's `SchemaPart`): the running bill and the invoices,
 * admins only (`adminOnly`, as `billing:read` is an admin's over REST). The same domain reads and presenters as
 * GET /billing/current and GET /invoices; invoices are a connection with REST-format cursors, newest period first.
 */
import { GraphQLID, GraphQLObjectType } from 'graphql';
import { currentBill, invoicesPage } from '../../../domain/billing/queries';
import { presentBill, presentInvoice } from '../../../domain/billing/present';
import type { GraphQLContext } from '../context';
import {
  adminOnly,
  connectionComplexity,
  connectionType,
  int,
  list,
  nn,
  pageArgs,
  readPage,
  reqInt,
  reqStr,
  str,
  toPage,
  type PageArgs,
} from '../kit';
import type { SchemaPart } from '../parts';

const BillLineType = new GraphQLObjectType({
  name: 'BillLine',
  description:
    'A line of a bill or invoice: the plan fee of a segment (prorated by the second) or files over quota',
  fields: {
    kind: { ...reqStr, description: '`plan` or `excess_files`' },
    description: reqStr,
    plan: reqStr,
    start: { ...str, description: 'plan lines: the segment start' },
    end: { ...str, description: 'plan lines: the segment end' },
    seconds: int,
    periodSeconds: int,
    unitCents: reqInt,
    quantity: reqInt,
    amountCents: reqInt,
  },
});

const PlanSegmentType = new GraphQLObjectType({
  name: 'PlanSegment',
  fields: { plan: str, start: reqStr, end: reqStr, seconds: reqInt },
});

const billFields = {
  periodKey: reqStr,
  periodStart: reqStr,
  periodEnd: reqStr,
  segments: { type: list(PlanSegmentType) },
  filesUsed: reqInt,
  lines: { type: list(BillLineType) },
  subtotalCents: reqInt,
  totalCents: reqInt,
  currency: reqStr,
};

const BillType = new GraphQLObjectType({
  name: 'Bill',
  description: 'The running bill of the current period: what its invoice would be if the period ended now',
  fields: { ...billFields, asOf: reqStr },
});

const InvoiceType = new GraphQLObjectType<ReturnType<typeof presentInvoice>>({
  name: 'Invoice',
  fields: {
    id: { type: nn(GraphQLID) },
    number: { ...reqStr, description: 'per company, sequential without gaps: YYYY-NNNNNN' },
    status: { ...reqStr, description: '`finalized` or `void`' },
    ...billFields,
    issuedAt: reqStr,
  },
});

const InvoiceConnection = connectionType('Invoice', InvoiceType);

export const billingPart: SchemaPart = {
  fields: {
    query: () => ({
      runningBill: adminOnly<unknown>({
        type: nn(BillType),
        description: 'the running bill (GET /billing/current)',
        resolve: async (_s, _a, c: GraphQLContext) => presentBill(await currentBill(c.db, c.actor)),
      }),
      invoices: adminOnly<unknown>({
        type: nn(InvoiceConnection),
        description: 'the invoices, newest period first (GET /invoices)',
        args: pageArgs,
        extensions: connectionComplexity,
        resolve: async (_s, args: PageArgs, c: GraphQLContext) => {
          const page = readPage(c, 'invoices', args);
          const rows = await invoicesPage(c.db, c.actor, page);
          const paged = toPage(c, 'invoices', page.limit, rows);
          return { ...paged, nodes: paged.nodes.map(presentInvoice) };
        },
      }),
    }),
  },
  types: [],
};

/**
 * The invoice document: a PDF rendered with pdfkit at finalisation and stored in MinIO next to the file
 * versions (`invoices/<companyId>/<invoiceId>.pdf` under the storage prefix). Deterministic content: the
 * company's details as `/companies/me` shows them, the number, the period, the lines and the total.
 */
import PDFDocument from 'pdfkit';
import type { Storage } from '../../common/storage';

export interface InvoiceDocumentInput {
  id: string;
  companyId: string;
  companyName: string;
  number: string;
  periodKey: string;
  periodStart: Date;
  periodEnd: Date;
  issuedAt: Date;
  currency: string;
  lines: Array<{ description: string; amountCents: number }>;
  subtotalCents: number;
  totalCents: number;
}

/** "1234.56 USD" from integer cents. */
export function formatCents(cents: number, currency: string): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')} ${currency}`;
}

export function renderInvoicePdf(invoice: InvoiceDocumentInput): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const doc = new PDFDocument({
      size: 'A4',
      margin: 50,
      info: { Title: `Invoice ${invoice.number}`, CreationDate: invoice.issuedAt },
    });
    const chunks: Buffer[] = [];
    doc.on('data', (c: Buffer) => chunks.push(c));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
    doc.fontSize(20).text(`Invoice ${invoice.number}`);
    doc.moveDown();
    doc.fontSize(11);
    doc.text(`Company: ${invoice.companyName}`);
    doc.text(`Company id: ${invoice.companyId}`);
    doc.text(`Invoice id: ${invoice.id}`);
    doc.text(
      `Period: ${invoice.periodKey} (${invoice.periodStart.toISOString()} to ${invoice.periodEnd.toISOString()})`,
    );
    doc.text(`Issued: ${invoice.issuedAt.toISOString()}`);
    doc.moveDown();
    for (const line of invoice.lines) {
      doc.text(`${line.description}: ${formatCents(line.amountCents, invoice.currency)}`);
    }
    doc.moveDown();
    doc.text(`Subtotal: ${formatCents(invoice.subtotalCents, invoice.currency)}`);
    doc.fontSize(14).text(`Total: ${formatCents(invoice.totalCents, invoice.currency)}`);
    doc.end();
  });
}

export function invoiceObjectKey(storage: Storage, companyId: string, invoiceId: string): string {
  return storage.key('invoices', companyId, `${invoiceId}.pdf`);
}

/** Renders and stores the document; returns its object key (the same key every time: a re-run overwrites it). */
export async function storeInvoiceDocument(storage: Storage, invoice: InvoiceDocumentInput): Promise<string> {
  const pdf = await renderInvoicePdf(invoice);
  const key = invoiceObjectKey(storage, invoice.companyId, invoice.id);
  await storage.client.putObject(storage.bucket, key, pdf, pdf.length, { 'Content-Type': 'application/pdf' });
  return key;
}

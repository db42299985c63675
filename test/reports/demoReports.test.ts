import { expect } from 'chai';
import iconv from 'iconv-lite';
import { demoOrdersUs, demoUmsatz } from '../../domain/identity/demo';
import { sniff } from '../../domain/files/sniff';
import { startWorker } from '../helpers/env';
import { call } from '../helpers/http';
import { eventually } from '../helpers/temporal';

describe('reports: the demo company', function () {
  this.timeout(120_000);

  it('has files whose reports are ready, readable by a demo visitor', async () => {
    const worker = await startWorker();
    try {
      const opened = await call('POST', '/demo/sessions');
      expect(opened.status, opened.text).to.equal(201);
      const token = opened.body.accessToken as string;
      const files = await call('GET', '/files', { token });
      const names = files.body.data.map((f: { originalName: string }) => f.originalName).sort();
      const seeded = ['inventory.tsv', 'sales-2026.csv', 'umsatz-2026.csv', 'orders-q2-2026.csv'];
      expect(names).to.include.members(seeded);
      for (const file of files.body.data as Array<{ id: string; originalName: string }>) {
        if (!seeded.includes(file.originalName)) continue;
        const report = await eventually(
          async () => {
            const res = await call('GET', `/files/${file.id}/report`, { token });
            return res.body?.status === 'ready' ? res.body : undefined;
          },
          { what: `the report of ${file.originalName}`, timeoutMs: 60_000 },
        );
        const sheet = report.profile.sheets[0];
        if (file.originalName === 'sales-2026.csv') {
          expect(sheet).to.include({ rows: 120, columns: 8 });
          expect(sheet.columnProfiles.map((c: any) => c.inferredType)).to.deep.equal([
            'integer',
            'date',
            'text',
            'text',
            'integer',
            'decimal',
            'boolean',
            'text',
          ]);
        } else if (file.originalName === 'umsatz-2026.csv') {
          // Windows-1252, Excel's separator line and a title above the table, semicolons, decimal commas,
          // day-first dates
          expect(sheet).to.include({ rows: 80, columns: 6 });
          expect(sheet.warnings.map((w: any) => [w.code, w.count])).to.deep.equal([
            ['lines_before_header', 3],
          ]);
          const version = await call('GET', `/files/${file.id}/versions/1`, { token });
          expect(version.body).to.include({ headerLine: 4, rowCount: 80, columnCount: 6 });
          const sniffed = sniff(iconv.encode(demoUmsatz(), 'win1252'), true, 'umsatz-2026.csv', {
            maxRows: 1000,
            maxColumns: 100,
          });
          // the seeded dialect is the one an upload of the same bytes records
          expect(sniffed).to.include({
            delimiter: ';',
            columns: 6,
            linesBeforeHeader: 3,
            headerRow: 3,
            encoding: 'windows-1252',
          });
          expect(sheet.columnProfiles.map((c: any) => [c.name, c.inferredType])).to.deep.equal([
            ['Beleg', 'text'],
            ['Datum', 'date'],
            ['Stadt', 'text'],
            ['Straße', 'text'],
            ['Betrag', 'decimal'],
            ['Währung', 'text'],
          ]);
          expect(sheet.columnProfiles[2].topValues.map((t: any) => t.value).sort()).to.deep.equal([
            'Düsseldorf',
            'Köln',
            'München',
            'Nürnberg',
          ]);
          expect(sheet.columnProfiles[4].max).to.be.greaterThan(1000);
          expect(sheet.columnProfiles[5].topValues).to.deep.equal([{ value: '€', count: 80 }]);
        } else if (file.originalName === 'orders-q2-2026.csv') {
          // a padded title row, month-first dates, dollars, percent and accounting negatives
          expect(sheet).to.include({ rows: 90, columns: 6 });
          const version = await call('GET', `/files/${file.id}/versions/1`, { token });
          expect(version.body).to.include({ headerLine: 3, rowCount: 90, columnCount: 6 });
          const sniffed = sniff(Buffer.from(demoOrdersUs()), true, 'orders-q2-2026.csv', {
            maxRows: 1000,
            maxColumns: 100,
          });
          expect(sniffed).to.include({ delimiter: ',', columns: 6, linesBeforeHeader: 2, headerRow: 3 });
          expect(sheet.columnProfiles.map((c: any) => [c.name, c.inferredType])).to.deep.equal([
            ['Order', 'text'],
            ['Date', 'date'],
            ['Customer', 'text'],
            ['Amount', 'decimal'],
            ['Discount', 'decimal'],
            ['Adjustment', 'decimal'],
          ]);
          const [, date, , amount, discount, adjustment] = sheet.columnProfiles;
          expect(date.min >= '2026-04-01' && date.max <= '2026-06-30', `${date.min}..${date.max}`).to.equal(
            true,
          );
          expect(amount.min).to.be.greaterThan(0);
          expect(amount.max).to.be.greaterThan(1000);
          expect(discount).to.include({ min: 0, max: 0.2 });
          expect(adjustment.max).to.equal(0);
          expect(adjustment.min).to.be.lessThan(0);
        } else {
          expect(sheet).to.include({ rows: 60, columns: 5 });
        }
      }
      // read-only: a demo session may not rebuild
      const first = files.body.data[0] as { id: string };
      const rebuild = await call('POST', `/files/${first.id}/versions/1/report/rebuild`, { token });
      expect(rebuild.status).to.equal(403);
    } finally {
      await worker.stop();
    }
  });
});

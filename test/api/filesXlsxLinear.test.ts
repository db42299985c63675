/**
 * The small parts an XLSX preview reads whole (styles, workbook, its relationships) and the sheet starts the
 * upload reads are scanned in linear time: a part of tags that never close (each a backtracking restart for a
 * `[^>]*` or a lazy `[\s\S]*?` pattern) must not freeze the API. The bounds are generous (seconds, where the
 * scans take milliseconds and the quadratic ones took minutes), so the tests are not timing-fragile.
 */
import { expect } from 'chai';
import { call } from '../helpers/http';
import { createTeam } from '../helpers/factories';
import { CONTENT_TYPES_XML, sheetXml, uploadFile, WORKBOOK_XML, zip, type ZipEntry } from '../helpers/files';

/** Just under 1 MiB, so no compression-ratio limit refuses the part (those apply over 1 MiB). */
const PART_BYTES = 1_000_000;
const fill = (unit: string) => unit.repeat(Math.floor(PART_BYTES / unit.length));
const BOUND_MS = 5_000;

const SHEET = sheetXml(
  'A1:B2',
  '<row r="1"><c r="A1" t="inlineStr"><is><t>when</t></is></c></row><row r="2"><c r="A2" s="0"><v>45000</v></c></row>',
);

function workbook(parts: { styles?: string; workbook?: string; rels?: string }): Buffer {
  const entries: ZipEntry[] = [
    { name: '[Content_Types].xml', data: CONTENT_TYPES_XML },
    { name: 'xl/workbook.xml', data: parts.workbook ?? WORKBOOK_XML },
    { name: 'xl/worksheets/sheet1.xml', data: SHEET },
  ];
  if (parts.styles) entries.push({ name: 'xl/styles.xml', data: parts.styles });
  if (parts.rels) entries.push({ name: 'xl/_rels/workbook.xml.rels', data: parts.rels });
  return zip(entries);
}

async function timed<T>(work: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const started = Date.now();
  const result = await work();
  return { result, ms: Date.now() - started };
}

describe('files: hostile XLSX parts are scanned in linear time (no regex backtracking)', function () {
  this.timeout(120_000);

  it('previews workbooks whose styles, workbook or relationships are ~1 MB of unclosed tags', async () => {
    const a = await createTeam({ plan: 'premium' });
    const cases: Array<[string, Parameters<typeof workbook>[0]]> = [
      ['styles: <numFmt without >', { styles: `<styleSheet>${fill('<numFmt ')}` }],
      ['styles: <cellXfs> never closed', { styles: `<styleSheet>${fill('<cellXfs>')}` }],
      [
        'styles: a format code of [ never closed',
        {
          styles:
            `<styleSheet><numFmts><numFmt numFmtId="164" formatCode="${fill('[')}"/></numFmts>` +
            '<cellXfs><xf numFmtId="164"/></cellXfs></styleSheet>',
        },
      ],
      [
        'workbook: <workbookPr and <sheet without >',
        { workbook: `<workbook>${fill('<workbookPr <sheet ')}` },
      ],
      ['relationships: <Relationship without >', { rels: `<Relationships>${fill('<Relationship ')}` }],
    ];
    for (const [what, parts] of cases) {
      const up = await uploadFile(workbook(parts), { token: a.adminToken, name: 'hostile.xlsx' });
      expect(up.status, `${what}: ${up.text}`).to.equal(201);
      const { result: res, ms } = await timed(() =>
        call('GET', `/files/${up.body.id}/versions/1/preview`, { token: a.adminToken }),
      );
      expect(res.status, `${what}: ${res.text}`).to.equal(200);
      expect(res.body.columns, what).to.deep.equal(['when']);
      expect(ms, what).to.be.below(BOUND_MS);
    }
  });

  it('uploads a workbook of many sheets whose start is unclosed <dimension tags', async () => {
    const a = await createTeam({ plan: 'premium' });
    // each sheet's first 64 KB (what the upload reads for the dimension) is `<dimension ` without `>`
    const start = `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">${'<dimension '.repeat(6000)}`;
    const sheets = Array.from({ length: 40 }, (_, i) => ({
      name: `xl/worksheets/sheet${i + 1}.xml`,
      data: `${start}<sheetData/></worksheet>`,
    }));
    const data = zip([
      { name: '[Content_Types].xml', data: CONTENT_TYPES_XML },
      { name: 'xl/workbook.xml', data: WORKBOOK_XML },
      ...sheets,
    ]);
    const { result: up, ms } = await timed(() =>
      uploadFile(data, { token: a.adminToken, name: 'dims.xlsx' }),
    );
    expect(up.status, up.text).to.equal(201);
    expect(up.body.version.rowCount).to.equal(null);
    expect(ms).to.be.below(BOUND_MS);
  });
});

/**
 * Comparisons end to end against the real services: the automatic comparison of each new version (and its
 * events, once per version, none when nothing differs), requested comparisons (202, Idempotency-Key, the
 * changes list, 400 / 404 / 422), visibility, and a few random pairs through HTTP + worker against the
 * reference.
 */
import { readdir } from 'node:fs/promises';
import { expect } from 'chai';
import iconv from 'iconv-lite';
import { testEnv, startWorker } from '../helpers/env';
import { untilLockWaiters } from '../helpers/locks';
import { createTeam } from '../helpers/factories';
import { call, expectErrorBody } from '../helpers/http';
import { uploadFile, uploadTo } from '../helpers/files';
import { eventually } from '../helpers/temporal';
import {
  spawnWorkerProcess,
  startWebhookApp,
  webhookTestConfig,
  webhookTestEnvVars,
} from '../helpers/webhooks';
import { compareRef, type Table } from './reference';

const V1 = 'id,name,qty,note\n1,ann,5,x\n2,bob,6,y\n3,cy,7,z\n';
// row 2 changed, row 3 removed, row 4 added, `note` removed, rows shuffled
const V2 = 'qty,name,id\n5,ann,1\n4,dan,4\n60,bob,2\n';

async function datasetEvents(fileId: string) {
  return testEnv()
    .knex('outbox')
    .whereIn('type', ['dataset.changed', 'dataset.schema_changed'])
    .whereRaw(`data->>'fileId' = ?`, [fileId])
    .orderBy('createdAt');
}

async function whenReady(token: string, path: string, what: string) {
  return eventually(
    async () => {
      const res = await call('GET', path, { token });
      return res.status === 200 && (res.body.status === 'ready' || res.body.status === 'failed')
        ? res.body
        : undefined;
    },
    { what, timeoutMs: 60_000 },
  );
}

function toCsv(t: Table): string {
  return [t.header, ...t.rows].map((r) => r.map((c) => c ?? '').join(',')).join('\n') + '\n';
}

/** Comparisons of the files named here wait before saving until their activity is cancelled. */
const held = new Map<string, { reached: boolean; interrupted: boolean }>();
async function holdAtGate({ fileId, signal }: { fileId: string; signal?: AbortSignal }): Promise<void> {
  const g = held.get(fileId);
  if (!g || !signal) return;
  g.reached = true;
  await new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
  g.interrupted = true;
}

describe('comparisons: automatic and requested, end to end', function () {
  this.timeout(240_000);
  let stop: () => Promise<void>;

  before(async () => {
    const worker = await startWorker({ comparisonBeforeSave: holdAtGate });
    stop = () => worker.stop();
  });
  after(async () => {
    await stop();
  });

  it('a semicolon CSV with decimal commas and day-first dates: its report types them, its next version compares them as numbers and dates', async () => {
    const team = await createTeam({ plan: 'premium' });
    const up = await uploadFile(
      'id;price;qty;day\n1;2,5;3;15.03.2024\n2;1.234,75;4;1.4.2024\n3;0,1;5;30.04.2024\n',
      {
        token: team.adminToken,
        name: 'prices.csv',
      },
    );
    expect(up.status, up.text).to.equal(201);
    const id = up.body.id as string;
    const report = await whenReady(team.adminToken, `/files/${id}/versions/1/report`, 'v1 report');
    expect(report.status).to.equal('ready');
    const price = report.profile.sheets[0].columnProfiles[1];
    expect(price).to.include({ inferredType: 'decimal', min: 0.1, max: 1234.75 });
    expect(price.mean).to.be.closeTo((2.5 + 1234.75 + 0.1) / 3, 1e-9);
    expect(report.profile.sheets[0].columnProfiles[3]).to.include({
      inferredType: 'date',
      min: '2024-03-15',
      max: '2024-04-30',
    });
    // 2,50 is 2,5, 01.04.2024 is 1.4.2024; 0,1 became 0,2
    const v2 = await uploadTo(
      `/files/${id}/versions`,
      'id;price;qty;day\n3;0,2;5;30/04/2024\n1;2,50;3;15.03.2024\n2;1234,75;4;01.04.2024\n',
      {
        token: team.adminToken,
        name: 'prices.csv',
      },
    );
    expect(v2.status, v2.text).to.equal(201);
    const done = await whenReady(team.adminToken, `/files/${id}/versions/2/comparison`, 'v2 compared');
    expect(done.result).to.deep.include({ added: 0, removed: 0, changed: 1, unchanged: 2, typeChanges: [] });
    const changes = await call('GET', `/comparisons/${done.id}/changes`, { token: team.adminToken });
    expect(changes.body.data.map((c: any) => [c.key, c.columns])).to.deep.equal([
      [{ id: '3' }, [{ column: 'price', old: '0.1', new: '0.2' }]],
    ]);
  });

  it('a Windows-1252 CSV is accepted as such: previewed, profiled and compared in its own characters, stored as uploaded', async () => {
    const team = await createTeam({ plan: 'premium' });
    const cp1252 = (text: string) => iconv.encode(text, 'win1252');
    const v1 = cp1252('Stadt;Betrag;Notiz\nMünchen;1,5;„gut“\nKöln;2,5;€ fünf\nZürich;3,0;ß\n');
    const up = await uploadFile(v1, { token: team.adminToken, name: 'städte.csv' });
    expect(up.status, up.text).to.equal(201);
    expect(up.body.version).to.include({
      format: 'csv',
      encoding: 'windows-1252',
      columnCount: 3,
      rowCount: 3,
    });
    const id = up.body.id as string;
    const preview = await call('GET', `/files/${id}/versions/1/preview`, { token: team.adminToken });
    expect(preview.status, preview.text).to.equal(200);
    expect(preview.body.rows).to.deep.equal([
      ['München', '1,5', '„gut“'],
      ['Köln', '2,5', '€ fünf'],
      ['Zürich', '3,0', 'ß'],
    ]);
    const report = await whenReady(team.adminToken, `/files/${id}/versions/1/report`, 'v1 report');
    expect(report.status).to.equal('ready');
    const [city, amount, note] = report.profile.sheets[0].columnProfiles;
    expect(city.topValues.map((t: any) => t.value).sort()).to.deep.equal(['Köln', 'München', 'Zürich']);
    expect(city.length).to.include({ min: 4, max: 7 });
    expect(amount).to.include({ inferredType: 'decimal', min: 1.5, max: 3 });
    expect(note.topValues.map((t: any) => t.value)).to.include.members(['„gut“', '€ fünf', 'ß']);
    // the stored object is the uploaded bytes
    const stored = await testEnv().storage.client.getObject(
      testEnv().storage.bucket,
      (await testEnv().knex('fileVersions').where({ fileId: id, version: 1 }).first()).objectKey,
    );
    const chunks: Buffer[] = [];
    for await (const c of stored) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).equals(v1)).to.equal(true);
    // its download is served with its charset, so a browser or a spreadsheet program reads it right
    expect(up.body.version.contentType).to.equal('text/csv; charset=windows-1252');
    const link = await call('GET', `/files/${id}/versions/1/download-link`, { token: team.adminToken });
    const got = await fetch(link.body.url);
    expect(got.headers.get('content-type')).to.equal('text/csv; charset=windows-1252');
    expect(Buffer.from(await got.arrayBuffer()).equals(v1)).to.equal(true);

    // a second version, ASCII for its first 64 KB and Windows-1252 after (the upload decides on every byte)
    const filler = Array.from({ length: 6000 }, (_, i) => `Ort ${i};${i},0;x`).join('\n');
    const v2 = cp1252(`Stadt;Betrag;Notiz\n${filler}\nMünchen;1,5;„gut“\nKöln;2,5;€ sechs\n`);
    expect(v2.subarray(0, 65536).every((b) => b < 0x80)).to.equal(true);
    const up2 = await uploadTo(`/files/${id}/versions`, v2, { token: team.adminToken, name: 'städte.csv' });
    expect(up2.status, up2.text).to.equal(201);
    expect(up2.body).to.include({ encoding: 'windows-1252', contentType: 'text/csv; charset=windows-1252' });
    // the object was created while the upload still looked like UTF-8: the link gives the version's charset
    const link2 = await call('GET', `/files/${id}/versions/2/download-link`, { token: team.adminToken });
    expect((await fetch(link2.body.url)).headers.get('content-type')).to.equal(
      'text/csv; charset=windows-1252',
    );
    const done = await whenReady(team.adminToken, `/files/${id}/versions/2/comparison`, 'v2 compared');
    expect(done.status).to.equal('ready');
    expect(done.result).to.deep.include({ added: 6000, removed: 1, changed: 1, unchanged: 1 });
    // in target row order: the removed row (base row 4) on the first page, Köln (row 6003) on the last
    const all = [];
    for (const page of [1, 61]) {
      const changes = await call('GET', `/comparisons/${done.id}/changes?limit=100&page=${page}`, {
        token: team.adminToken,
      });
      expect(changes.status, changes.text).to.equal(200);
      all.push(...changes.body.data.filter((c: any) => c.kind !== 'added'));
    }
    expect(all.map((c: any) => [c.kind, c.key, c.columns ?? null])).to.deep.equal([
      ['removed', { Stadt: 'Zürich' }, null],
      ['changed', { Stadt: 'Köln' }, [{ column: 'Notiz', old: '€ fünf', new: '€ sechs' }]],
    ]);
  });

  it("lines before the header — Excel's separator line (sep=;), a bank statement's notes — are no rows: the delimiter the line names, the header, the rows, numbered as a spreadsheet shows them", async () => {
    const team = await createTeam({ plan: 'premium' });
    // commas in the cells would win the sniff without the line; the line names the semicolon
    const v1 = 'sep=;\r\nid;price;note\r\n1;2,5;a, b\r\n2;3,5;c, d\r\n3;4,5;e, f\r\n';
    const up = await uploadFile(v1, { token: team.adminToken, name: 'export.csv' });
    expect(up.status, up.text).to.equal(201);
    expect(up.body.version).to.include({ format: 'csv', columnCount: 3, rowCount: 3, headerLine: 2 });
    const id = up.body.id as string;
    const stored = await testEnv().knex('fileVersions').where({ fileId: id, version: 1 }).first();
    expect(stored.delimiter).to.equal(';');
    const preview = await call('GET', `/files/${id}/versions/1/preview`, { token: team.adminToken });
    expect(preview.status, preview.text).to.equal(200);
    expect(preview.body.columns).to.deep.equal(['id', 'price', 'note']);
    expect(preview.body.rows[0]).to.deep.equal(['1', '2,5', 'a, b']);
    const report = await whenReady(team.adminToken, `/files/${id}/versions/1/report`, 'v1 report');
    expect(report.status).to.equal('ready');
    const sheet = report.profile.sheets[0];
    expect(sheet).to.include({ rows: 3, columns: 3 });
    expect(sheet.columnProfiles.map((c: any) => [c.name, c.inferredType])).to.deep.equal([
      ['id', 'integer'],
      ['price', 'decimal'],
      ['note', 'text'],
    ]);
    expect(sheet.warnings).to.deep.include({
      code: 'lines_before_header',
      count: 1,
      message:
        "1 line(s) before the header (Excel's separator line, a title or notes) are not part of the table",
    });
    // the next version without the line: the same table, one price changed, found on the rows a spreadsheet shows
    const v2 = 'id;price;note\n1;2,5;a, b\n2;3,75;c, d\n3;4,5;e, f\n';
    const up2 = await uploadTo(`/files/${id}/versions`, v2, { token: team.adminToken, name: 'export.csv' });
    expect(up2.status, up2.text).to.equal(201);
    const done = await whenReady(team.adminToken, `/files/${id}/versions/2/comparison`, 'v2 compared');
    expect(done.result).to.deep.include({ added: 0, removed: 0, changed: 1, unchanged: 2, columnsAdded: [] });
    const changes = await call('GET', `/comparisons/${done.id}/changes`, { token: team.adminToken });
    expect(changes.body.data.map((c: any) => [c.key, c.baseRow, c.targetRow, c.columns])).to.deep.equal([
      [{ id: '2' }, 3, 3, [{ column: 'price', old: '3.5', new: '3.75' }]],
    ]);
    // a bank statement: notes above the table, an empty line, then the header on line 4 — the notes are no rows
    const bank =
      '"Konto";"DE02 1203 0000 0000 2020 51";\r\n"Zeitraum";"01.01.2026 - 31.01.2026";\r\n\r\n' +
      '"Buchungstag";"Valuta";"Text";"Betrag"\r\n' +
      '"02.01.2026";"02.01.2026";"Miete";"-800,00"\r\n"15.01.2026";"16.01.2026";"Gehalt";"2.500,00"\r\n';
    const statement = await uploadFile(bank, { token: team.adminToken, name: 'umsaetze.csv' });
    expect(statement.status, statement.text).to.equal(201);
    expect(statement.body.version).to.include({ columnCount: 4, rowCount: 2, headerLine: 4 });
    const sid = statement.body.id as string;
    const shown = await call('GET', `/files/${sid}/versions/1/preview`, { token: team.adminToken });
    expect(shown.body.columns).to.deep.equal(['Buchungstag', 'Valuta', 'Text', 'Betrag']);
    expect(shown.body.rows).to.have.length(2);
    const built = await whenReady(team.adminToken, `/files/${sid}/versions/1/report`, 'statement report');
    const table = built.profile.sheets[0];
    expect(table).to.include({ rows: 2, columns: 4 });
    expect(table.columnProfiles.map((c: any) => [c.name, c.inferredType])).to.deep.equal([
      ['Buchungstag', 'date'],
      ['Valuta', 'date'],
      ['Text', 'text'],
      ['Betrag', 'decimal'],
    ]);
    expect(table.columnProfiles[3]).to.include({ min: -800, max: 2500 });
    expect(table.warnings.find((w: any) => w.code === 'lines_before_header')).to.include({ count: 3 });
    // its rows are numbered as a spreadsheet shows them: the header on row 4, the data from row 5 (the quoted
    // file goes the normalising way)
    const nextStatement =
      '"Konto";"DE02 1203 0000 0000 2020 51";\r\n"Zeitraum";"01.01.2026 - 31.01.2026";\r\n\r\n' +
      '"Buchungstag";"Valuta";"Text";"Betrag"\r\n' +
      '"02.01.2026";"02.01.2026";"Miete";"-800,00"\r\n"15.01.2026";"16.01.2026";"Gehalt";"2.600,00"\r\n';
    const sv2 = await uploadTo(`/files/${sid}/versions`, nextStatement, {
      token: team.adminToken,
      name: 'umsaetze.csv',
    });
    expect(sv2.status, sv2.text).to.equal(201);
    const sdone = await whenReady(
      team.adminToken,
      `/files/${sid}/versions/2/comparison`,
      'statement compared',
    );
    // (keyed by its first column, unique in both)
    expect(sdone.result).to.deep.include({ added: 0, removed: 0, changed: 1, unchanged: 1 });
    const schanges = await call('GET', `/comparisons/${sdone.id}/changes`, { token: team.adminToken });
    expect(schanges.body.data.map((c: any) => [c.kind, c.baseRow, c.targetRow])).to.deep.equal([
      ['changed', 6, 6],
    ]);
    // a title line above a quote-free table (the fast way, rows read back by line): header row 2, data from 3
    const titled = await uploadFile('Sales report\nid,price\n1,2.5\n2,3.5\n3,4.5\n', {
      token: team.adminToken,
      name: 'titled.csv',
    });
    expect(titled.status, titled.text).to.equal(201);
    expect(titled.body.version).to.include({ headerLine: 2, rowCount: 3 });
    const tid = titled.body.id as string;
    await whenReady(team.adminToken, `/files/${tid}/versions/1/report`, 'titled report');
    const tv2 = await uploadTo(`/files/${tid}/versions`, 'Sales report\nid,price\n1,2.5\n2,3.75\n3,4.5\n', {
      token: team.adminToken,
      name: 'titled.csv',
    });
    expect(tv2.status, tv2.text).to.equal(201);
    const tdone = await whenReady(team.adminToken, `/files/${tid}/versions/2/comparison`, 'titled compared');
    expect(tdone.result).to.deep.include({ added: 0, removed: 0, changed: 1, unchanged: 2 });
    const tchanges = await call('GET', `/comparisons/${tdone.id}/changes`, { token: team.adminToken });
    expect(tchanges.body.data.map((c: any) => [c.key, c.baseRow, c.targetRow, c.columns])).to.deep.equal([
      [{ id: '2' }, 4, 4, [{ column: 'price', old: '3.5', new: '3.75' }]],
    ]);
    // a spreadsheet program's export of a sheet with a title row and a blank row above the table: both padded
    // with delimiters to the table's width (before: the title was the header, the real header a data row)
    const exported = (amount: string) =>
      `Umsatzbericht 2026;;\r\n;;\r\nid;Kunde;Betrag\r\n1;A;1,5\r\n2;B;${amount}\r\n3;C;4\r\n`;
    const padded = await uploadFile(exported('2,5'), { token: team.adminToken, name: 'bericht.csv' });
    expect(padded.status, padded.text).to.equal(201);
    expect(padded.body.version).to.include({ columnCount: 3, rowCount: 3, headerLine: 3 });
    const pid = padded.body.id as string;
    const pshown = await call('GET', `/files/${pid}/versions/1/preview`, { token: team.adminToken });
    expect(pshown.body.columns).to.deep.equal(['id', 'Kunde', 'Betrag']);
    expect(pshown.body.rows).to.have.length(3);
    const preport = await whenReady(team.adminToken, `/files/${pid}/versions/1/report`, 'padded report');
    expect(preport.profile.sheets[0]).to.include({ rows: 3, columns: 3 });
    expect(preport.profile.sheets[0].columnProfiles.map((c: any) => [c.name, c.inferredType])).to.deep.equal([
      ['id', 'integer'],
      ['Kunde', 'text'],
      ['Betrag', 'decimal'],
    ]);
    const pv2 = await uploadTo(`/files/${pid}/versions`, exported('2,75'), {
      token: team.adminToken,
      name: 'bericht.csv',
    });
    expect(pv2.status, pv2.text).to.equal(201);
    const pdone = await whenReady(team.adminToken, `/files/${pid}/versions/2/comparison`, 'padded compared');
    expect(pdone.result).to.deep.include({ added: 0, removed: 0, changed: 1, unchanged: 2 });
    const pchanges = await call('GET', `/comparisons/${pdone.id}/changes`, { token: team.adminToken });
    // the header on row 3, the data from row 4
    expect(pchanges.body.data.map((c: any) => [c.key, c.baseRow, c.targetRow, c.columns])).to.deep.equal([
      [{ id: '2' }, 5, 5, [{ column: 'Betrag', old: '2.5', new: '2.75' }]],
    ]);

    // a line naming a delimiter the service does not read is refused, saying so
    const pipe = await uploadFile('sep=|\nid|price\n1|2\n', { token: team.adminToken, name: 'pipe.csv' });
    expect(String(expectErrorBody(pipe, 400).message)).to.match(
      /sep=\|\); accepted are comma, semicolon and tab/,
    );
  });

  it('a Windows-1250 CSV (Central European Excel) is read in its own letters: previewed, profiled, served with its charset', async () => {
    const team = await createTeam({ plan: 'premium' });
    const bytes = iconv.encode(
      'Miasto;Kwota\r\nWrocław;1,5\r\nBiałystok;2,5\r\nŁódź;3,0\r\nGdańsk;4,0\r\n',
      'win1250',
    );
    const up = await uploadFile(bytes, { token: team.adminToken, name: 'miasta.csv' });
    expect(up.status, up.text).to.equal(201);
    expect(up.body.version).to.include({
      encoding: 'windows-1250',
      contentType: 'text/csv; charset=windows-1250',
      rowCount: 4,
    });
    const id = up.body.id as string;
    const preview = await call('GET', `/files/${id}/versions/1/preview`, { token: team.adminToken });
    expect(preview.body.rows.map((r: string[]) => r[0])).to.deep.equal([
      'Wrocław',
      'Białystok',
      'Łódź',
      'Gdańsk',
    ]);
    const report = await whenReady(team.adminToken, `/files/${id}/versions/1/report`, 'v1 report');
    const [city, amount] = report.profile.sheets[0].columnProfiles;
    expect(city.topValues.map((t: any) => t.value).sort()).to.deep.equal([
      'Białystok',
      'Gdańsk',
      'Wrocław',
      'Łódź',
    ]);
    expect(amount).to.include({ inferredType: 'decimal', min: 1.5, max: 4 });
    // Hungarian: its letters all Hungarian's, ő and ű among them (Windows-1252 would read Gyõr, Szûcs)
    const hu = iconv.encode('Név;Város;Összeg\r\nKővári;Győr;1\u00a0234,5\r\nSzűcs;Pécs;2,5\r\n', 'win1250');
    const huUp = await uploadFile(hu, { token: team.adminToken, name: 'varosok.csv' });
    expect(huUp.status, huUp.text).to.equal(201);
    expect(huUp.body.version).to.include({ encoding: 'windows-1250', rowCount: 2 });
    const huPreview = await call('GET', `/files/${huUp.body.id}/versions/1/preview`, {
      token: team.adminToken,
    });
    expect(huPreview.body.columns).to.deep.equal(['Név', 'Város', 'Összeg']);
    expect(huPreview.body.rows.map((r: string[]) => r.slice(0, 2))).to.deep.equal([
      ['Kővári', 'Győr'],
      ['Szűcs', 'Pécs'],
    ]);
    // thousands grouped by a no-break space, as Hungarian Excel writes them
    const huReport = await whenReady(
      team.adminToken,
      `/files/${huUp.body.id}/versions/1/report`,
      'hu report',
    );
    expect(huReport.profile.sheets[0].columnProfiles[2]).to.include({
      inferredType: 'decimal',
      min: 2.5,
      max: 1234.5,
    });
  });

  it('a UTF-16 "Unicode text" TSV is previewed, profiled and compared with a UTF-8 next version by its text', async () => {
    const team = await createTeam({ plan: 'premium' });
    const text = 'Stadt\tBetrag\r\nMünchen\t1,5\r\nKöln\t€ 2\r\n';
    const v1 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    const up = await uploadFile(v1, { token: team.adminToken, name: 'städte.txt' });
    expect(up.status, up.text).to.equal(201);
    expect(up.body.version).to.include({
      format: 'tsv',
      encoding: 'utf-16le',
      contentType: 'text/tab-separated-values; charset=utf-16le',
      rowCount: 2,
      columnCount: 2,
    });
    const id = up.body.id as string;
    const preview = await call('GET', `/files/${id}/versions/1/preview`, { token: team.adminToken });
    expect(preview.body.columns).to.deep.equal(['Stadt', 'Betrag']);
    expect(preview.body.rows).to.deep.equal([
      ['München', '1,5'],
      ['Köln', '€ 2'],
    ]);
    const report = await whenReady(team.adminToken, `/files/${id}/versions/1/report`, 'v1 report');
    expect(report.status).to.equal('ready');
    const [city, amount] = report.profile.sheets[0].columnProfiles;
    expect(city).to.include({ name: 'Stadt', min: 'Köln', max: 'München', inferredType: 'text' });
    // a tab-separated file with a decimal comma reads it as a number, and a number with a currency sign as
    // that number (README "Reports", notation)
    expect(amount).to.include({ inferredType: 'decimal', min: 1.5, max: 2 });
    expect(amount.topValues.map((t: any) => t.value).sort()).to.deep.equal(['1.5', '2']);
    // the next version in UTF-8: the same text is the same value
    const v2 = await uploadTo(`/files/${id}/versions`, 'Stadt\tBetrag\nKöln\t€ 3\nMünchen\t1,5\n', {
      token: team.adminToken,
      name: 'städte.txt',
    });
    expect(v2.status, v2.text).to.equal(201);
    expect(v2.body.encoding).to.equal('utf-8');
    const done = await whenReady(team.adminToken, `/files/${id}/versions/2/comparison`, 'v2 compared');
    expect(done.result).to.deep.include({ added: 0, removed: 0, changed: 1, unchanged: 1 });
    const changes = await call('GET', `/comparisons/${done.id}/changes`, { token: team.adminToken });
    expect(changes.body.data.map((c: any) => [c.key, c.columns])).to.deep.equal([
      [{ Stadt: 'Köln' }, [{ column: 'Betrag', old: '2', new: '3' }]],
    ]);
  });

  it('compares each new version with the previous one; events once per version, none when nothing differs', async () => {
    const team = await createTeam({ plan: 'premium' });
    const up = await uploadFile(V1, { token: team.adminToken, visibility: 'company' });
    expect(up.status, up.text).to.equal(201);
    const id = up.body.id as string;
    const v2 = await uploadTo(`/files/${id}/versions`, V2, { token: team.adminToken });
    expect(v2.status, v2.text).to.equal(201);
    const done = await whenReady(team.employeeToken, `/files/${id}/versions/2/comparison`, 'v2 compared');
    expect(done.status).to.equal('ready');
    expect(done.automatic).to.equal(true);
    expect(done.result).to.deep.include({
      added: 1,
      removed: 1,
      changed: 1,
      unchanged: 1,
      columnsAdded: [],
      columnsRemoved: ['note'],
      changeCount: 3,
    });
    expect(done.result.sheets[0]).to.deep.include({ matching: 'inferred_key', keyColumns: ['id'] });
    expectErrorBody(await call('GET', `/files/${id}/versions/1/comparison`, { token: team.adminToken }), 404);

    const changes = await call('GET', `/comparisons/${done.id}/changes?limit=2`, { token: team.adminToken });
    expect(changes.status, changes.text).to.equal(200);
    expect(changes.body.meta).to.deep.equal({ page: 1, limit: 2, total: 3, totalPages: 2 });
    const page2 = await call('GET', `/comparisons/${done.id}/changes?limit=2&page=2`, {
      token: team.adminToken,
    });
    const all = [...changes.body.data, ...page2.body.data];
    expect(all.find((c: any) => c.kind === 'changed')).to.deep.equal({
      sheet: 'CSV',
      kind: 'changed',
      key: { id: '2' },
      baseRow: 3,
      targetRow: 4,
      columns: [{ column: 'qty', old: '6', new: '60' }],
    });

    // version 3 equal to version 2 (rows shuffled): no event
    const v3 = await uploadTo(`/files/${id}/versions`, 'id,name,qty\n2,bob,60\n1,ann,5\n4,dan,4\n', {
      token: team.adminToken,
    });
    expect(v3.status, v3.text).to.equal(201);
    const same = await whenReady(team.adminToken, `/files/${id}/versions/3/comparison`, 'v3 compared');
    expect(same.result).to.deep.include({ added: 0, removed: 0, changed: 0, unchanged: 3 });

    const events = await datasetEvents(id);
    expect(events.map((e: any) => [e.type, e.data.version, e.data.previousVersion])).to.deep.equal([
      ['dataset.changed', 2, 1],
      ['dataset.schema_changed', 2, 1],
    ]);
    const changed = events[0].data;
    expect(changed).to.deep.include({ fileId: id, added: 1, removed: 1, changed: 1, unchanged: 1 });
    expect(changed.datasetId).to.be.a('string');
    expect(events[1].data).to.deep.include({ columnsRemoved: ['note'], columnsAdded: [], typeChanges: [] });
    // never a cell value in an event
    expect(JSON.stringify(events.map((e: any) => e.data))).not.to.match(/ann|bob|dan|"60"/);

    // the workflow names the file and both versions, carries the company
    const handle = testEnv().temporal.workflow.getHandle(`comparison:${id}:v1:v2`);
    const described = await handle.describe();
    expect(described.status.name).to.equal('COMPLETED');
  });

  it("waits (queued) until both versions' reports have settled, then compares; never longer than COMPARISON_REPORT_WAIT_SECONDS", async () => {
    const { knex, config, temporal } = testEnv();
    const team = await createTeam({ plan: 'premium' });
    const up = await uploadFile(V1, { token: team.adminToken, visibility: 'company' });
    const id = up.body.id as string;
    const report1 = await whenReady(team.adminToken, `/files/${id}/versions/1/report`, 'v1 report');
    expect(report1.status).to.equal('ready');
    // a rebuild of version 1's report in flight (as far as the comparison can tell)
    const v1Report = () =>
      knex('reports').whereIn(
        'fileVersionId',
        knex('fileVersions').select('id').where({ fileId: id, version: 1 }),
      );
    await v1Report().update({ status: 'building' });
    const v2 = await uploadTo(`/files/${id}/versions`, V2, { token: team.adminToken });
    expect(v2.status, v2.text).to.equal(201);
    await whenReady(team.adminToken, `/files/${id}/versions/2/report`, 'v2 report');
    await new Promise((r) => setTimeout(r, 1500));
    const waiting = await call('GET', `/files/${id}/versions/2/comparison`, { token: team.adminToken });
    expect(waiting.status, waiting.text).to.equal(200);
    expect(waiting.body.status).to.equal('queued');
    await v1Report().update({ status: 'ready' });
    const done = await whenReady(team.adminToken, `/files/${id}/versions/2/comparison`, 'v2 compared');
    expect(done.result).to.deep.include({ added: 1, removed: 1, changed: 1, unchanged: 1 });
    // the wait is in the workflow's history: polls (one short activity each) between timers
    const history = await temporal.workflow.getHandle(`comparison:${id}:v1:v2`).fetchHistory();
    const activities = (history.events ?? [])
      .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
      .filter(Boolean);
    expect(activities.filter((a) => a === 'comparisonReportsSettled').length).to.be.greaterThan(1);
    expect(activities.at(-1)).to.equal('compareVersions');
    expect((history.events ?? []).some((e) => e.timerStartedEventAttributes)).to.equal(true);

    // a report that never settles holds the comparison no longer than the configured wait
    const before = config.comparisons.reportWaitSeconds;
    config.comparisons.reportWaitSeconds = 1;
    try {
      await knex('reports')
        .whereIn('fileVersionId', knex('fileVersions').select('id').where({ fileId: id, version: 2 }))
        .update({ status: 'building' });
      const v3 = await uploadTo(`/files/${id}/versions`, 'id,name,qty\n2,bob,60\n1,ann,5\n4,dan,4\n', {
        token: team.adminToken,
      });
      expect(v3.status, v3.text).to.equal(201);
      const same = await whenReady(team.adminToken, `/files/${id}/versions/3/comparison`, 'v3 compared');
      expect(same.status).to.equal('ready');
      expect(same.result).to.deep.include({ added: 0, removed: 0, changed: 0, unchanged: 3 });
    } finally {
      config.comparisons.reportWaitSeconds = before;
    }
  });

  it('versions whose reports are ready are read without a checking pass; a file the strict reader refuses is read again the long way', async () => {
    const team = await createTeam({ plan: 'premium' });
    const rest = '3,cy\n4,dee\n5,eve\n6,flo\n7,gus\n8,hal\n';
    const up = await uploadFile(`id,name\n1,ann\n2,bob\n${rest}`, {
      token: team.adminToken,
      visibility: 'company',
    });
    expect(up.status, up.text).to.equal(201);
    const id = up.body.id as string;
    // a line break inside quotes: plain bytes, but DuckDB's strict parallel reader refuses it
    const v2 = await uploadTo(`/files/${id}/versions`, `id,name\n1,ann\n2,"bo\nb"\n${rest}`, {
      token: team.adminToken,
    });
    expect(v2.status, v2.text).to.equal(201);
    const c2 = await whenReady(team.adminToken, `/files/${id}/versions/2/comparison`, 'v2 compared');
    expect(c2.status, JSON.stringify(c2)).to.equal('ready');
    expect(c2.result, JSON.stringify(c2.result)).to.deep.include({
      added: 0,
      removed: 0,
      changed: 1,
      unchanged: 7,
      columnsAdded: [],
    });
    const changes = await call('GET', `/comparisons/${c2.id}/changes`, { token: team.adminToken });
    expect(changes.body.data[0]).to.deep.include({ kind: 'changed', key: { id: '2' } });
    expect(changes.body.data[0].columns).to.deep.equal([{ column: 'name', old: 'bob', new: 'bo\nb' }]);
    // a report whose shape does not fit the file as read (one column fewer): that version is loaded the
    // checked way and typed by the report's rule, and the comparison still agrees
    const { knex } = testEnv();
    await knex.raw(
      `update reports set result = jsonb_set(result, '{profile,sheets,0,columnProfiles}',
         (result->'profile'->'sheets'->0->'columnProfiles') - 1)
       where file_version_id = (select id from file_versions where file_id = ? and version = 1)`,
      [id],
    );
    const req = await call('POST', '/comparisons', {
      token: team.adminToken,
      json: { base: { fileId: id, version: 1 }, target: { fileId: id, version: 2 } },
    });
    expect(req.status, req.text).to.equal(202);
    const c3 = await whenReady(team.adminToken, `/comparisons/${req.body.id}`, 'requested comparison');
    expect(c3.status, JSON.stringify(c3)).to.equal('ready');
    expect(c3.result).to.deep.include({ changed: 1, unchanged: 7, added: 0, removed: 0, typeChanges: [] });
  });

  it('both versions refused by the strict reader (a quoted line break in each): both read again the long way', async () => {
    const team = await createTeam({ plan: 'premium' });
    const up = await uploadFile('id,name\n1,"an\nn"\n2,bob\n', { token: team.adminToken });
    expect(up.status, up.text).to.equal(201);
    const id = up.body.id as string;
    const r1 = await whenReady(team.adminToken, `/files/${id}/versions/1/report`, 'v1 report');
    expect(r1.status).to.equal('ready');
    const v2 = await uploadTo(`/files/${id}/versions`, 'id,name\n1,"an\nn"\n2,bobby\n', {
      token: team.adminToken,
    });
    expect(v2.status, v2.text).to.equal(201);
    const r2 = await whenReady(team.adminToken, `/files/${id}/versions/2/report`, 'v2 report');
    expect(r2.status).to.equal('ready');
    const expected = { added: 0, removed: 0, changed: 1, unchanged: 1, changeCount: 1 };
    const automatic = await whenReady(team.adminToken, `/files/${id}/versions/2/comparison`, 'v2 compared');
    expect(automatic.status, JSON.stringify(automatic)).to.equal('ready');
    expect(automatic.result).to.deep.include(expected);
    // requested now, with both reports ready: both versions are loaded unchecked and both refused
    const req = await call('POST', '/comparisons', {
      token: team.adminToken,
      json: { base: { fileId: id, version: 1 }, target: { fileId: id, version: 2 } },
    });
    expect(req.status, req.text).to.equal(202);
    const requested = await whenReady(team.adminToken, `/comparisons/${req.body.id}`, 'requested comparison');
    expect(requested.status, JSON.stringify(requested)).to.equal('ready');
    expect(requested.result).to.deep.include(expected);
    const changes = await call('GET', `/comparisons/${req.body.id}/changes`, { token: team.adminToken });
    expect(changes.body.data).to.deep.equal([
      {
        sheet: 'CSV',
        kind: 'changed',
        key: { id: '2' },
        baseRow: 3,
        targetRow: 3,
        columns: [{ column: 'name', old: 'bob', new: 'bobby' }],
      },
    ]);
  });

  it('POST /comparisons: 202, Idempotency-Key, key columns, 400, 422, 404 across companies and for a private file', async () => {
    const team = await createTeam({ plan: 'premium' });
    const other = await createTeam({ plan: 'premium' });
    const up = await uploadFile(V1, { token: team.adminToken, visibility: 'private' });
    const id = up.body.id as string;
    await uploadTo(`/files/${id}/versions`, V2, { token: team.adminToken });
    const second = await uploadFile(V1, { token: team.adminToken, visibility: 'company' });

    const body = {
      base: { fileId: id, version: 1 },
      target: { fileId: id, version: 2 },
      keyColumns: ['name'],
    };
    const headers = { 'Idempotency-Key': `cmp-${id}` };
    const first = await call('POST', '/comparisons', { token: team.adminToken, json: body, headers });
    expect(first.status, first.text).to.equal(202);
    expect(first.body.status).to.equal('queued');
    const again = await call('POST', '/comparisons', { token: team.adminToken, json: body, headers });
    expect(again.status).to.equal(202);
    expect(again.body.id).to.equal(first.body.id);

    const ready = await whenReady(team.adminToken, `/comparisons/${first.body.id}`, 'requested comparison');
    expect(ready.status).to.equal('ready');
    expect(ready.result.sheets[0]).to.deep.include({ matching: 'key', keyColumns: ['name'] });
    expect(ready.result).to.deep.include({ added: 1, removed: 1, changed: 1, unchanged: 1 });
    // requested comparisons send no events (only the automatic one did, once it is saved)
    await whenReady(team.adminToken, `/files/${id}/versions/2/comparison`, 'automatic comparison');
    expect((await datasetEvents(id)).length).to.equal(2);

    const missing = await call('POST', '/comparisons', {
      token: team.adminToken,
      json: { ...body, keyColumns: ['note'] },
    });
    expectErrorBody(missing, 400);
    const twoFiles = await call('POST', '/comparisons', {
      token: team.adminToken,
      json: { base: { fileId: id, version: 1 }, target: { fileId: second.body.id, version: 1 } },
    });
    expectErrorBody(twoFiles, 422);
    // a version beyond what PostgreSQL's integer holds is the schema's 400 naming the field
    const huge = await call('POST', '/comparisons', {
      token: team.adminToken,
      json: { base: { fileId: id, version: 2147483648 }, target: { fileId: id, version: 1 } },
    });
    expect(expectErrorBody(huge, 400).message).to.equal('body.base.version must be <= 2147483647');
    // another company: 404 for the request and the comparison
    expectErrorBody(await call('POST', '/comparisons', { token: other.adminToken, json: body }), 404);
    expectErrorBody(await call('GET', `/comparisons/${first.body.id}`, { token: other.adminToken }), 404);
    expectErrorBody(
      await call('GET', `/comparisons/${first.body.id}/changes`, { token: other.adminToken }),
      404,
    );
    // an employee who cannot see the admin's private file: 404 everywhere
    expectErrorBody(await call('POST', '/comparisons', { token: team.employeeToken, json: body }), 404);
    expectErrorBody(await call('GET', `/comparisons/${first.body.id}`, { token: team.employeeToken }), 404);
    expectErrorBody(
      await call('GET', `/files/${id}/versions/2/comparison`, { token: team.employeeToken }),
      404,
    );
  });

  it('a few random pairs through HTTP and the worker agree with the reference', async () => {
    const team = await createTeam({ plan: 'premium' });
    const pairs: Array<[Table, Table, string[] | undefined]> = [
      [
        {
          header: ['id', 'a', 'b'],
          rows: [
            ['1', '1', 'x'],
            ['2', '2.0', 'y'],
            ['3', '', 'z'],
          ],
        },
        {
          header: ['b', 'id', 'a'],
          rows: [
            ['y', '2', '2'],
            ['x', '1', '1.5'],
            ['w', '9', 'NA'],
          ],
        },
        undefined,
      ],
      [
        {
          header: ['a', 'b'],
          rows: [
            ['1', 'x'],
            ['1', 'x'],
            ['2', 'y'],
          ],
        },
        {
          header: ['a', 'b'],
          rows: [
            ['1', 'x'],
            ['2', 'y'],
            ['2', 'y'],
            ['3', 'z'],
          ],
        },
        undefined,
      ],
      [
        {
          header: ['k', 'v'],
          rows: [
            ['a', '1'],
            ['a', '2'],
            ['b', '3'],
          ],
        },
        {
          header: ['k', 'v', 'w'],
          rows: [
            ['a', '2'],
            ['b', '3'],
            ['a', '5'],
          ].map((r) => [...r, 't']),
        },
        ['k'],
      ],
      [
        {
          header: ['id', 'when'],
          rows: [
            ['1', '2024-01-01'],
            ['2', '2024-01-02'],
          ],
        },
        {
          header: ['id', 'when'],
          rows: [
            ['1', '2024-01-01 00:00'],
            ['2', '2024-01-02T10:00:00Z'],
          ],
        },
        undefined,
      ],
    ];
    for (const [base, target, keyColumns] of pairs) {
      const up = await uploadFile(toCsv(base), { token: team.adminToken });
      const id = up.body.id as string;
      await uploadTo(`/files/${id}/versions`, toCsv(target), { token: team.adminToken });
      const res = await call('POST', '/comparisons', {
        token: team.adminToken,
        json: { base: { fileId: id, version: 1 }, target: { fileId: id, version: 2 }, keyColumns },
      });
      expect(res.status, res.text).to.equal(202);
      const done = await whenReady(team.adminToken, `/comparisons/${res.body.id}`, 'random pair');
      const expected = compareRef(base, target, keyColumns);
      expect(done.result).to.deep.include({
        added: expected.added,
        removed: expected.removed,
        changed: expected.changed,
        unchanged: expected.unchanged,
        columnsAdded: expected.columnsAdded,
        columnsRemoved: expected.columnsRemoved,
        typeChanges: expected.typeChanges,
      });
      const list = await call('GET', `/comparisons/${res.body.id}/changes?limit=100`, {
        token: team.adminToken,
      });
      const canon = (cs: any[]) =>
        cs.map((c) => JSON.stringify([c.kind, c.key, c.baseRow, c.targetRow, c.columns])).sort();
      expect(canon(list.body.data)).to.deep.equal(canon(expected.changes));
    }
  });

  it('deleting the file removes its comparisons and changes', async () => {
    const team = await createTeam({ plan: 'premium' });
    const up = await uploadFile(V1, { token: team.adminToken });
    const id = up.body.id as string;
    await uploadTo(`/files/${id}/versions`, V2, { token: team.adminToken });
    const del = await call('DELETE', `/files/${id}`, { token: team.adminToken });
    expect(del.status, del.text).to.equal(204);
    // whatever state the automatic comparison was in, nothing of it stays (its workflow was cancelled or
    // found the file gone)
    await eventually(
      async () => {
        const desc = await testEnv()
          .temporal.workflow.getHandle(`comparison:${id}:v1:v2`)
          .describe()
          .catch(() => undefined);
        return desc && desc.status.name !== 'RUNNING' ? true : undefined;
      },
      { what: 'the comparison workflow ended', timeoutMs: 60_000 },
    );
    const left = await testEnv().knex('comparisons').where({ fileId: id });
    const changes = await testEnv().knex('comparisonChanges').where({ companyId: team.company.id });
    expect([left.length, changes.length]).to.deep.equal([0, 0]);
  });

  it('a comparison asked for while its file is being deleted: 404, nothing kept', async () => {
    const { knex } = testEnv();
    const team = await createTeam({ plan: 'premium' });
    const up = await uploadFile(V1, { token: team.adminToken });
    const id = up.body.id as string;
    await uploadTo(`/files/${id}/versions`, V2, { token: team.adminToken });
    // the delete as DELETE /files/{id} makes it (the file locked, its rows removed), held open while the
    // comparison is asked for; the request reads the committed versions, and must not answer 409 (its row
    // refused by the foreign keys) once the delete commits
    const trx = await knex.transaction();
    let asked: ReturnType<typeof call> | undefined;
    try {
      await trx('files').where({ id }).forUpdate().first();
      await trx('files').where({ id }).delete();
      let answered = false;
      asked = call('POST', '/comparisons', {
        token: team.adminToken,
        json: { base: { fileId: id, version: 1 }, target: { fileId: id, version: 2 } },
      }).then((r) => ((answered = true), r));
      await untilLockWaiters(knex, 1, () => answered);
      await trx.commit();
    } catch (err) {
      await trx.rollback();
      throw err;
    }
    expectErrorBody(await asked!, 404);
    expect(await knex('comparisons').where({ fileId: id, automatic: false })).to.have.lengthOf(0);
  });

  it('deleting the file interrupts a comparison in flight: cancelled, its activity stopped, nothing left', async () => {
    const team = await createTeam({ plan: 'premium' });
    const up = await uploadFile(V1, { token: team.adminToken });
    const id = up.body.id as string;
    const g = { reached: false, interrupted: false };
    held.set(id, g);
    await uploadTo(`/files/${id}/versions`, V2, { token: team.adminToken });
    await eventually(async () => g.reached || undefined, {
      what: 'the comparison held before saving',
      timeoutMs: 60_000,
    });
    const del = await call('DELETE', `/files/${id}`, { token: team.adminToken });
    expect(del.status, del.text).to.equal(204);
    const { temporal, knex, config } = testEnv();
    const handle = temporal.workflow.getHandle(`comparison:${id}:v1:v2`);
    await eventually(async () => (await handle.describe()).status.name === 'CANCELLED' || undefined, {
      what: 'the comparison workflow cancelled',
      timeoutMs: 30_000,
    });
    // the running activity saw the cancellation (at its next heartbeat) and stopped: its folder is removed
    await eventually(async () => g.interrupted || undefined, {
      what: 'the comparison activity interrupted',
      timeoutMs: 30_000,
    });
    await eventually(
      async () => {
        const left = await readdir(config.reports.workDir).catch(() => [] as string[]);
        return left.filter((f) => f.startsWith('compare-')).length === 0 || undefined;
      },
      { what: `no comparison folder left in ${config.reports.workDir}`, timeoutMs: 25_000 },
    );
    expect(await knex('comparisons').where({ fileId: id })).to.deep.equal([]);
    expect(await knex('comparisonChanges').where({ companyId: team.company.id })).to.deep.equal([]);
    const events = await datasetEvents(id);
    expect(events).to.deep.equal([]);
  });

  it('a worker stopped in the middle of a comparison: another worker completes it, one result and one event', async () => {
    const env = webhookTestEnvVars('compare-kill', { TEST_COMPARISON_WAIT_MS: '120000' });
    const config = webhookTestConfig('compare-kill');
    const child = await spawnWorkerProcess(env);
    const { baseUrl } = await startWebhookApp(config);
    const team = await createTeam({ plan: 'premium' });
    const up = await uploadFile(V1, { token: team.adminToken, baseUrl });
    const id = up.body.id as string;
    await uploadTo(`/files/${id}/versions`, V2, { token: team.adminToken, baseUrl });
    // the child holds the comparison after comparing, before saving: kill it there
    await eventually(
      async () => {
        const res = await call('GET', `/files/${id}/versions/2/comparison`, {
          token: team.adminToken,
          baseUrl,
        });
        return res.body?.status === 'comparing' && res.body.progress?.phase === 'saving' ? true : undefined;
      },
      { what: 'the comparison held in the child worker', timeoutMs: 60_000 },
    );
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const worker = await startWorker({ config });
    try {
      const done = await whenReady(
        team.adminToken,
        `/files/${id}/versions/2/comparison`,
        'finished by the second worker',
      );
      expect(done.status).to.equal('ready');
      expect(done.result).to.deep.include({ added: 1, removed: 1, changed: 1, unchanged: 1, changeCount: 3 });
      expect(await testEnv().knex('comparisons').where({ fileId: id })).to.have.length(1);
      expect(await testEnv().knex('comparisonChanges').where({ comparisonId: done.id })).to.have.length(3);
      expect((await datasetEvents(id)).map((e: any) => e.type)).to.deep.equal([
        'dataset.changed',
        'dataset.schema_changed',
      ]);
      const result: unknown = await testEnv().temporal.workflow.getHandle(`comparison:${id}:v1:v2`).result();
      expect(result).to.deep.equal({ status: 'ready' });
    } finally {
      await worker.stop();
    }
  });
});

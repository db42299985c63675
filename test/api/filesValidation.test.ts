import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import iconv from 'iconv-lite';
import * as Minio from 'minio';
import { createApp } from '../../api/app';
import { MAX_FILE_BYTES } from '../../domain/files/formats';
import type { Storage } from '../../common/storage';
import { call, expectErrorBody } from '../helpers/http';
import { testEnv } from '../helpers/env';
import { createTeam } from '../helpers/factories';
import { knexThrough, startPgProxy } from '../helpers/pgProxy';
import { eventually } from '../helpers/temporal';
import {
  CONTENT_TYPES_XML,
  csv,
  expectHiddenFrom,
  footprint,
  incompleteUploadsAt,
  objectsOf,
  sheetXml,
  uploadFile,
  uploadTo,
  WORKBOOK_XML,
  xlsx,
  zip,
} from '../helpers/files';

const NOTHING = {
  files: 0,
  versions: 0,
  datasets: 0,
  events: 0,
  filesUsed: 0,
  objects: 0,
};

/** A copy of the API whose storage is `storage` (and database `knex`: fault injection), listening on loopback. */
async function appWith(
  storage: Storage,
  knex = testEnv().deps.knex,
): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const server = http.createServer(createApp({ ...testEnv().deps, storage, knex }).callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/**
 * The real storage, recording the keys of multipart uploads begun (MinIO lists unfinished uploads only per
 * exact key), and failing the `failPart`-th part upload or every single PUT when asked.
 */
function recordingStorage(options: { failPart?: number; failPut?: boolean } = {}) {
  const real = testEnv().storage;
  const multipartKeys = new Set<string>();
  let parts = 0;
  const client = new Proxy(real.client, {
    get(target, prop, receiver) {
      if (prop === 'initiateNewMultipartUpload') {
        return async (...args: Parameters<Minio.Client['initiateNewMultipartUpload']>) => {
          multipartKeys.add(args[1]);
          return target.initiateNewMultipartUpload(...args);
        };
      }
      if (prop === 'uploadPart') {
        return async (...args: Parameters<Minio.Client['uploadPart']>) => {
          parts++;
          if (parts === options.failPart) throw new Error('injected: MinIO went away');
          return target.uploadPart(...args);
        };
      }
      if (prop === 'putObject' && options.failPut) {
        return async () => Promise.reject(new Error('injected: disk full'));
      }
      const value = Reflect.get(target, prop, receiver) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { storage: { ...real, client } as Storage, multipartKeys, parts: () => parts };
}

describe('files: content checks and size limit', function () {
  this.timeout(90_000);

  it('accepts CSV (comma, semicolon), TSV and XLSX by content, whatever the name says; text in UTF-8, Windows-1252 or UTF-16', async () => {
    const a = await createTeam({ plan: 'premium' });
    const b = await createTeam({ plan: 'premium' });
    const ids: string[] = [];
    const utf16le = (text: string) =>
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    const cases: Array<[string, Buffer | string, string, string | null]> = [
      ['comma.txt', 'a,b,c\n1,2,3\n', 'csv', 'utf-8'],
      ['semi.csv', '\ufeffa;b\n"x;y";2\n', 'csv', 'utf-8'],
      ['tabs.dat', 'a\tb\n1\t2\n', 'tsv', 'utf-8'],
      ['quoted.csv', 'name,note\n"Smith, J","line\nbreak"\n', 'csv', 'utf-8'],
      ['workbook.bin', await xlsx(2), 'xlsx', null],
      ['latin.csv', Buffer.from('a;b\ncaf\xe9;1\n', 'latin1'), 'csv', 'windows-1252'],
      // older Excel for Mac: Mac Roman (ü is 9F there)
      ['mac.csv', iconv.encode('Stadt;Betrag\nMünchen;1,5\n', 'macintosh'), 'csv', 'macintosh'],
      // a spreadsheet program's "Unicode text" export: UTF-16 with its byte order mark, tab-separated
      ['unicode.txt', utf16le('Stadt\tBetrag\r\nMünchen\t1,5\r\n'), 'tsv', 'utf-16le'],
      [
        'unicode-be.txt',
        Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('a\tb\n€\t2\n', 'utf16le').swap16()]),
        'tsv',
        'utf-16be',
      ],
    ];
    for (const [name, data, format, encoding] of cases) {
      const res = await uploadFile(data, { token: a.adminToken, name });
      expect(res.status, `${name}: ${res.text}`).to.equal(201);
      expect(res.body.version.format, name).to.equal(format);
      expect(res.body.version.encoding, name).to.equal(encoding);
      if (encoding && encoding !== 'utf-8') {
        expect(res.body.version, name).to.include({ columnCount: 2, rowCount: 1 });
        expect(res.body.version.contentType, name).to.match(new RegExp(`; charset=${encoding}$`));
      }
      if (encoding === 'macintosh' || encoding === 'utf-16le') {
        const preview = await call('GET', `/files/${res.body.id}/versions/1/preview`, {
          token: a.adminToken,
        });
        expect(preview.body.rows[0][0], name).to.equal('München');
      }
      ids.push(res.body.id);
    }
    await expectHiddenFrom(b.adminToken, ids);
  });

  it('refuses what is not a spreadsheet with 400, judged by content, and leaves nothing behind', async () => {
    const a = await createTeam({ plan: 'free' });
    const png = Buffer.concat([Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'), Buffer.alloc(200, 1)]);
    const cases: Array<[string, Buffer | string, RegExp]> = [
      ['image.csv', png, /not a spreadsheet/],
      ['prose.csv', 'Dear customer, thank you.\nWe are glad; really.\nBye\n', /no consistent delimiter/],
      ['one-column.csv', 'name\nalice\nbob\n', /no consistent delimiter/],
      [
        'mixed.csv',
        Buffer.concat([Buffer.from('a,b\ncafé,1\n'), Buffer.from('caf\xe9,2\n', 'latin1')]),
        /not a spreadsheet.*mixes UTF-8 with bytes UTF-8 does not allow \(save it as UTF-8\)/,
      ],
      [
        'odd-unicode.csv',
        Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('a,b\n1,2\n', 'utf16le'), Buffer.from([0x33])]),
        /not a spreadsheet.*the UTF-16 text ends in the middle of a character/,
      ],
      [
        'nul-unicode.csv',
        Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('a,b\n1,\u0000\n', 'utf16le')]),
        /not a spreadsheet/,
      ],
      ['nul.csv', Buffer.concat([Buffer.from('a,b\n1,2\n'), Buffer.alloc(70_000, 0)]), /not a spreadsheet/],
      [
        'legacy.xls',
        Buffer.concat([Buffer.from('d0cf11e0a1b11ae1', 'hex'), Buffer.alloc(512)]),
        /legacy \.xls/,
      ],
      ['docs.xlsx', zip([{ name: 'word/document.xml', data: '<w:document/>' }]), /not an XLSX workbook/],
      [
        'broken.xlsx',
        Buffer.concat([Buffer.from('PK\x03\x04'), Buffer.alloc(1000, 7)]),
        /zip structure is broken/,
      ],
      [
        'fake-sheet.xlsx',
        zip([
          { name: '[Content_Types].xml', data: CONTENT_TYPES_XML },
          { name: 'xl/workbook.xml', data: WORKBOOK_XML },
          { name: 'xl/worksheets/sheet1.xml', data: 'just text, not xml' },
        ]),
        /not a worksheet/,
      ],
    ];
    for (const [name, data, message] of cases) {
      const res = await uploadFile(data, { token: a.adminToken, name });
      expect(res.status, `${name}: ${res.text}`).to.equal(400);
      expect(String(expectErrorBody(res, 400).message), name).to.match(message);
    }
    expect(await footprint(a.company.id)).to.deep.equal(NOTHING);
  });

  it('refuses decompression bombs and absurd sheets with a clear 400', async () => {
    const a = await createTeam({ plan: 'premium' });
    const base = [
      { name: '[Content_Types].xml', data: CONTENT_TYPES_XML },
      { name: 'xl/workbook.xml', data: WORKBOOK_XML },
    ];
    // 64 MB of one repeated row compresses about 1000 to 1
    const row = '<row r="1"><c r="A1"><v>1</v></c></row>';
    const bomb = zip([
      ...base,
      {
        name: 'xl/worksheets/sheet1.xml',
        data: sheetXml('A1:A2', row.repeat(Math.ceil((64 << 20) / row.length))),
      },
    ]);
    expect(bomb.length).to.be.below(1 << 20);
    const bombRes = await uploadFile(bomb, { token: a.adminToken, name: 'bomb.xlsx' });
    expect(String(expectErrorBody(bombRes, 400).message)).to.match(
      /unpacks \d+ times its size.*decompression bomb/,
    );

    const manyRows = zip([...base, { name: 'xl/worksheets/sheet1.xml', data: sheetXml('A1:C5000000') }]);
    const rowsRes = await uploadFile(manyRows, { token: a.adminToken, name: 'rows.xlsx' });
    expect(expectErrorBody(rowsRes, 400).message).to.equal(
      `the sheet has 4999999 rows; at most ${testEnv().config.files.maxRows} are accepted`,
    );

    const wide = await xlsx(1, testEnv().config.files.maxColumns + 1);
    const wideRes = await uploadFile(wide, { token: a.adminToken, name: 'wide.xlsx' });
    expect(expectErrorBody(wideRes, 400).message).to.equal(
      `the sheet has ${testEnv().config.files.maxColumns + 1} columns; at most ${testEnv().config.files.maxColumns} are accepted`,
    );
    const wideCsv = csv(1, testEnv().config.files.maxColumns + 1);
    expect(expectErrorBody(await uploadFile(wideCsv, { token: a.adminToken }), 400).message).to.match(
      /columns/,
    );

    const tooManyParts = zip([
      ...base,
      { name: 'xl/worksheets/sheet1.xml', data: sheetXml('A1:A1') },
      ...Array.from({ length: testEnv().config.files.xlsxMaxEntries }, (_, i) => ({
        name: `x/${i}`,
        data: 'x',
      })),
    ]);
    expect(
      String(expectErrorBody(await uploadFile(tooManyParts, { token: a.adminToken }), 400).message),
    ).to.match(/more than \d+ parts/);
    expect(await footprint(a.company.id)).to.deep.equal(NOTHING);
  });

  it('answers 413 from Content-Length before reading the body', async () => {
    const a = await createTeam({ plan: 'premium' });
    const url = new URL(testEnv().baseUrl);
    // headers announce 30 MB, only a few bytes follow and the request never ends: the answer must not wait
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request({
        host: url.hostname,
        port: url.port,
        path: '/files',
        method: 'POST',
        headers: {
          authorization: `Bearer ${a.adminToken}`,
          'content-type': 'multipart/form-data; boundary=xyz',
          'content-length': String(30 * 1024 * 1024),
        },
      });
      const timer = setTimeout(() => {
        req.destroy();
        reject(new Error('no answer within 5 s: the server waited for the body'));
      }, 5000);
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          clearTimeout(timer);
          req.destroy();
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() });
        });
      });
      req.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      req.write('--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n\r\na,b\n');
    });
    expect(answer.status).to.equal(413);
    expect(JSON.parse(answer.body).message).to.match(/larger than 25 MB/);
    expect(await footprint(a.company.id)).to.deep.equal(NOTHING);
  });

  it('refuses a CSV with more rows than the limit while streaming (400), nothing stored', async () => {
    const a = await createTeam({ plan: 'premium' });
    const max = testEnv().config.files.maxRows;
    // "1,2\n" per row: the limit is passed after about 4 MB
    const body = Buffer.alloc((max + 2) * 4 + 8);
    body.write('a,b\n', 0);
    for (let at = 4; at + 4 <= body.length; at += 4) body.write('1,2\n', at);
    const res = await uploadFile(body, { token: a.adminToken, name: 'long.csv' });
    expect(expectErrorBody(res, 400).message).to.equal(`the sheet has more than ${max} rows`);
    expect(await footprint(a.company.id)).to.deep.equal(NOTHING);
  });

  it('over 25 MB: 413 at once from Content-Length, and 413 when a chunked stream passes the limit; nothing left', async () => {
    const a = await createTeam({ plan: 'premium' });
    const b = await createTeam({ plan: 'premium' });
    const line = 'aaaaaaaaaa,bbbbbbbbbb,cccccccccc\n';
    const big = Buffer.alloc(MAX_FILE_BYTES + 1024 * 1024, line);
    big.write('x,y,z\n', 0);

    const started = Date.now();
    const declared = await uploadFile(big, { token: a.adminToken, name: 'big.csv' });
    expect(expectErrorBody(declared, 413).message).to.match(/larger than 25 MB/);
    expect(Date.now() - started).to.be.below(10_000);

    // without Content-Length: the stream passes the limit after parts went to MinIO; they are aborted
    const recording = recordingStorage();
    const app = await appWith(recording.storage);
    try {
      const streamed = await uploadFile(big, {
        token: a.adminToken,
        name: 'big.csv',
        chunked: 256 * 1024,
        baseUrl: app.baseUrl,
      });
      expect(expectErrorBody(streamed, 413).message).to.match(/larger than 25 MB/);
    } finally {
      await app.close();
    }
    expect(recording.multipartKeys.size).to.equal(1);
    expect(await incompleteUploadsAt(recording.multipartKeys)).to.deep.equal([]);
    // exactly 25 MB is accepted
    const exact = Buffer.alloc(MAX_FILE_BYTES, line);
    exact.write('x,y,z\n', 0);
    const ok = await uploadFile(exact, { token: b.adminToken, name: 'exact.csv', chunked: 1024 * 1024 });
    expect(ok.status, ok.text).to.equal(201);
    expect(ok.body.version.sizeBytes).to.equal(MAX_FILE_BYTES);
    expect(await footprint(a.company.id)).to.deep.equal(NOTHING);
    // the 413 was logged as the answer of a streamed upload: the server is fine afterwards
    expect((await call('GET', '/files', { token: a.adminToken })).body.data).to.deep.equal([]);
  });
});

describe('files: every upload is all or nothing', function () {
  this.timeout(90_000);

  it('MinIO fails midway through a multipart upload: 500, and no row, no object, no parts, no event', async () => {
    const a = await createTeam({ plan: 'free' });
    const recording = recordingStorage({ failPart: 2 });
    const app = await appWith(recording.storage);
    try {
      const body = Buffer.alloc(testEnv().config.files.uploadPartBytes * 3, `${'a'.repeat(97)},b\n`);
      const res = await uploadFile(body, { token: a.adminToken, baseUrl: app.baseUrl });
      expect(expectErrorBody(res, 500).message).to.equal('internal server error');
      expect(recording.parts()).to.be.at.least(2);
    } finally {
      await app.close();
    }
    expect(await footprint(a.company.id)).to.deep.equal(NOTHING);
    expect(recording.multipartKeys.size).to.equal(1);
    expect(await incompleteUploadsAt(recording.multipartKeys)).to.deep.equal([]);
  });

  it('MinIO refuses the single PUT of a small file: 500, nothing left', async () => {
    const a = await createTeam({ plan: 'free' });
    const app = await appWith(recordingStorage({ failPut: true }).storage);
    try {
      expectErrorBody(await uploadFile(csv(3), { token: a.adminToken, baseUrl: app.baseUrl }), 500);
    } finally {
      await app.close();
    }
    expect(await footprint(a.company.id)).to.deep.equal(NOTHING);
  });

  it('the database fails in the upload transaction: 500, the stored object is removed, no row, no event', async () => {
    const a = await createTeam({ plan: 'free' });
    const b = await createTeam({ plan: 'free' });
    const { knex } = testEnv();
    const fn = `fail_outbox_${a.company.id.replace(/-/g, '')}`;
    // a trigger in this run's database only: the event insert (the last write of the upload) fails
    await knex.raw(`create function ${fn}() returns trigger language plpgsql as $$
      begin
        if new.company_id = '${a.company.id}' then raise exception 'injected: database failure'; end if;
        return new;
      end $$`);
    await knex.raw(`create trigger ${fn} before insert on outbox for each row execute function ${fn}()`);
    try {
      for (const data of [csv(3), await xlsx(3)]) {
        const res = await uploadFile(data, {
          token: a.adminToken,
          name: Buffer.isBuffer(data) ? 'a.xlsx' : 'a.csv',
        });
        expectErrorBody(res, 500);
      }
      // a second company is not affected
      expect((await uploadFile(csv(1), { token: b.adminToken })).status).to.equal(201);
    } finally {
      await knex.raw(`drop trigger ${fn} on outbox`);
      await knex.raw(`drop function ${fn}()`);
    }
    expect(await footprint(a.company.id)).to.deep.equal(NOTHING);
    expect((await call('GET', '/files', { token: a.adminToken })).body.data).to.deep.equal([]);
    // the same upload now succeeds
    expect((await uploadFile(csv(3), { token: a.adminToken })).status).to.equal(201);
  });

  it('the database commits but the answer to COMMIT is lost: 201, and the saved version keeps its object', async () => {
    const a = await createTeam({ plan: 'free' });
    const env = testEnv();
    const proxy = await startPgProxy(env.config.databaseUrl);
    const knex = knexThrough(proxy, { actAs: env.config.databaseAppRole });
    const app = await appWith(env.storage, knex);
    let res;
    try {
      proxy.cutAfterCommit(/insert into "file_versions"/);
      res = await uploadFile(csv(3), { token: a.adminToken, baseUrl: app.baseUrl });
      expect(proxy.cuts()).to.equal(1);
    } finally {
      await app.close();
      await knex.destroy();
      await proxy.close();
    }
    expect(res.status, res.text).to.equal(201);
    expect(await footprint(a.company.id)).to.deep.equal({
      files: 1,
      versions: 1,
      datasets: 1,
      events: 1,
      filesUsed: 1,
      objects: 1,
    });
    const [version] = await env.knex('fileVersions').where({ companyId: a.company.id });
    expect(res.body).to.deep.include({ id: version.fileId, currentVersion: 1 });
    expect(res.body.version).to.deep.include({ id: version.id, version: 1, rowCount: 3 });
    expect(await objectsOf(a.company.id)).to.deep.equal([version.objectKey]);
    const preview = await call('GET', `/files/${version.fileId}/versions/1/preview`, { token: a.adminToken });
    expect(preview.status, preview.text).to.equal(200);
  });

  it('a client that goes away mid-upload leaves nothing: the multipart upload is aborted', async () => {
    const a = await createTeam({ plan: 'premium' });
    const recording = recordingStorage();
    const app = await appWith(recording.storage);
    try {
      const url = new URL(app.baseUrl);
      const head =
        '--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n\r\n' +
        'a,b\n'.repeat(1024);
      const req = http.request({
        host: url.hostname,
        port: url.port,
        path: '/files',
        method: 'POST',
        headers: {
          authorization: `Bearer ${a.adminToken}`,
          'content-type': 'multipart/form-data; boundary=xyz',
          'content-length': String(20 * 1024 * 1024),
        },
      });
      req.on('error', () => undefined);
      req.write(head);
      // 12 MB of the announced 20: two parts reach MinIO, then the client disappears
      const chunk = Buffer.alloc(1000 * 1000, `${'a'.repeat(97)},b\n`);
      for (let i = 0; i < 12; i++) {
        if (!req.write(chunk)) await new Promise((r) => req.once('drain', r));
      }
      await eventually(async () => recording.multipartKeys.size > 0, { what: 'a multipart upload begun' });
      req.destroy();
      await eventually(
        async () => (await incompleteUploadsAt(recording.multipartKeys)).length === 0 || undefined,
        { what: 'the multipart upload aborted', timeoutMs: 10_000 },
      );
    } finally {
      await app.close();
    }
    expect(await footprint(a.company.id)).to.deep.equal(NOTHING);
  });

  it('a new version that fails leaves the file at its current version', async () => {
    const a = await createTeam({ plan: 'premium' });
    const b = await createTeam({ plan: 'premium' });
    const first = await uploadFile(csv(2), { token: a.adminToken });
    await expectHiddenFrom(b.adminToken, [first.body.id]);
    const id = first.body.id as string;
    const before = await footprint(a.company.id);
    const bad = await uploadTo(`/files/${id}/versions`, 'not, a\nspread', { token: a.adminToken });
    expectErrorBody(bad, 400);
    expect(await footprint(a.company.id)).to.deep.equal(before);
    expect((await call('GET', `/files/${id}`, { token: a.adminToken })).body.currentVersion).to.equal(1);
  });
});

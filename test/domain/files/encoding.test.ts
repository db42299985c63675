import { expect } from 'chai';
import { Readable } from 'node:stream';
import iconv from 'iconv-lite';
import {
  decodeWindows1252,
  eightBitEncoding,
  holdsUtf8Sequence,
  utf8Stream,
  type TextEncoding,
} from '../../../domain/files/encoding';

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

describe('text encodings (pure)', () => {
  const text = 'Stadt;Betrag\r\nMünchen;€ 1,5\r\n„Köln“;𝔘 ß\r\n';
  const encoded: Array<[TextEncoding, Buffer]> = [
    ['utf-8', Buffer.from(text)],
    // Windows-1252 has no 𝔘: left out of its bytes
    [
      'windows-1252',
      Buffer.from('Stadt;Betrag\r\nM\xfcnchen;\x80 1,5\r\n\x84K\xf6ln\x93;\xdf\r\n', 'latin1'),
    ],
    // Windows-1250 has € „“ ß ü ö but no 𝔘
    ['windows-1250', iconv.encode(text.replace('𝔘 ', ''), 'win1250')],
    // Mac Roman has „“ but no 𝔘 either (nor €, in iconv-lite's table)
    ['macintosh', iconv.encode(text.replace('𝔘 ', '').replace('€ ', ''), 'macintosh')],
    ['utf-16le', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')])],
    ['utf-16be', Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(text, 'utf16le').swap16()])],
  ];

  it('utf8Stream gives the text as UTF-8 whatever the chunks, without a UTF-16 byte order mark', async () => {
    for (const [encoding, bytes] of encoded) {
      const expected =
        encoding === 'windows-1252' || encoding === 'windows-1250'
          ? text.replace('𝔘 ', '')
          : encoding === 'macintosh'
            ? text.replace('𝔘 ', '').replace('€ ', '')
            : text;
      for (const size of [1, 2, 3, 5, bytes.length]) {
        const chunks: Buffer[] = [];
        for (let at = 0; at < bytes.length; at += size) chunks.push(bytes.subarray(at, at + size));
        const out = await readAll(utf8Stream(Readable.from(chunks), encoding));
        expect(out.toString('utf8'), `${encoding} in chunks of ${size}`).to.equal(expected);
      }
    }
  });

  it("utf8Stream's result destroyed destroys its source; the source's error fails it", async () => {
    const source = new Readable({ read() {} });
    const out = utf8Stream(source, 'windows-1252');
    out.destroy();
    await new Promise((r) => setImmediate(r));
    expect(source.destroyed).to.equal(true);
    const failing = new Readable({ read() {} });
    const failed = utf8Stream(failing, 'utf-16le');
    const error = new Promise((resolve) => failed.on('error', resolve));
    failing.destroy(new Error('MinIO went away'));
    expect(((await error) as Error).message).to.equal('MinIO went away');
  });

  it("decodeWindows1252 reads every byte as iconv-lite's Windows-1252 table does", () => {
    const every = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    expect(decodeWindows1252(every)).to.equal(iconv.decode(every, 'win1252'));
    expect(decodeWindows1252(Buffer.from([0x80, 0x84, 0x93, 0x94, 0x96, 0xe4, 0xdf]))).to.equal('€„“”–äß');
  });

  /** each text, written in `written` (iconv-lite's name), is judged to be `expected` */
  function judged(texts: string[], written: string, expected: string): void {
    for (const text of texts) expect(eightBitEncoding(iconv.encode(text, written)), text).to.equal(expected);
  }

  it('eightBitEncoding tells Mac Roman from Windows-1252 by the letters its bytes make inside words', () => {
    const texts = [
      'Name;Stadt\nMüller;München\nGrößer;Köln\n',
      'nom;ville\nélève;Besançon\nl’été;Bâle\n',
      'name,city\nPeña;Logroño\ndon’t;São Paulo\n',
      'Straße;Maß\nÄrger;Übel\n',
    ];
    judged(texts, 'win1252', 'windows-1252');
    judged(texts, 'macintosh', 'macintosh');
    // nothing to tell them apart (no byte after a lowercase letter): Windows-1252
    expect(eightBitEncoding(Buffer.from('a;b\n\x80 5;\xc4\n', 'latin1'))).to.equal('windows-1252');
  });

  it('eightBitEncoding reads Central European text as Windows-1250 when one of its own letters stands inside a word', () => {
    judged(
      [
        'miasto;kwota\nWrocław;1,5\nBiałystok;2\nŁódź;3\n',
        'nazwisko;uwagi\nKowalska;może później\nWiśniewski;mąka\n',
        'meno;mesto\nĽubomír;Žilina\nPoľana;Kráľová\n',
        'Název;Město\nkoťata;Brno\n',
        // Czech ě and ů inside words (Windows-1252's ì and ù stand only at a word's end: lunedì, più, où)
        'Název;Město\nDěčín;Plzeň\nPřerov;Brno\n',
        'adresa;poznámka\nDomů;věc\n',
      ],
      'win1250',
      'windows-1250',
    );
    // Western text whose bytes are those letters outside words stays Windows-1252: a unit, a footnote, capitals;
    // the letters of Windows-1252 that are letters in Windows-1250 too decide nothing (è, ì, ø read as č, ě, ř)
    judged(
      [
        'Artikel;Volumen\nTank;5 m³\nFass;2 m³\n',
        'Preis¹;Gewicht²\n1;2\n',
        "ville;département\nL'HAŸE-LES-ROSES;Val-de-Marne\n",
        'Name;Stadt\nMüller;München\n¿Qué?;España\n',
        'città;perché\nlunedì;caffè\nSøren;Ærø\n',
        'giorno;più\nlunedì;così\nNicolò;où\n',
      ],
      'win1252',
      'windows-1252',
    );
    // Hungarian: every letter one of Hungarian's, ő or ű among them (read as õ and û in Windows-1252)
    judged(
      ['Név;Város\nKővári;Győr\nSzűcs;Pécs\n', 'NÉV;VÁROS\nKŐVÁRI;GYŐR\n', 'tétel;összeg\nkő;1\nfűtés;2\n'],
      'win1250',
      'windows-1250',
    );
    // Portuguese and French with õ and û stay Windows-1252: beside them letters Hungarian lacks (ã ç ê è), or no
    // other letter of Hungarian's at all
    judged(
      [
        'Nome;Cidade\nCamões;Lisboa\nJoão;Évora\n',
        'mês;preço\nopções;põe\n',
        'mot;phrase\nsûr;Il a été très sûr\n',
        'mois\naoût\ncoût\n',
        'Nome;Valor\nLimões;2\n',
      ],
      'win1252',
      'windows-1252',
    );
    // nothing tells (Windows-1252): a Polish name alone at the end of its word (Michał), which a footnote could be
    judged(['imię;nazwisko\nMichał;Nowak\n'], 'win1250', 'windows-1252');
  });

  it('holdsUtf8Sequence tells a mix of encodings from Windows-1252 text', () => {
    expect(holdsUtf8Sequence(Buffer.from('M\xfcnchen \x80', 'latin1'))).to.equal(false);
    expect(
      holdsUtf8Sequence(Buffer.concat([Buffer.from('Zürich '), Buffer.from('M\xfcnchen', 'latin1')])),
    ).to.equal(true);
  });
});

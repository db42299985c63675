import * as yauzl from 'yauzl';
import { BadRequestError } from '../../../common/errors';
import { UnreadableFileError } from '../../files/unreadable';
import { BROKEN_ZIP, openZipFile, readEntries } from '../../files/xlsx';
import type { DateStyle } from '../../files/xlsxDates';
import { CANNOT_READ, dateStyles, readSharedStrings, workbookLayout } from '../../files/xlsxRead';

/**
 * A workbook opened for the loader: its worksheets in the workbook's order, with their names, and what its
 * cells are read by (shared strings, the styles that show dates, the date system). The parts are read through
 * the zip's directory, so the order of the entries in the file does not matter.
 */
export interface LoaderWorkbook {
  zip: yauzl.ZipFile;
  /**
   * each worksheet once: those the workbook lists, in its order, then any other worksheet part (`Sheet<k>`, its
   * place; `Sheet<k> (2)` when the workbook lists a sheet of that name)
   */
  sheets: Array<{ name: string; part: yauzl.Entry }>;
  strings: string[];
  /** the cell styles (indexes into cellXfs) that show a date, a time of day or a duration (xlsxRead.dateStyles) */
  dates: Map<number, DateStyle>;
  date1904: boolean;
  close(): void;
}

/**
 * yauzl's refusal of the zip's structure (no end of central directory, a directory entry that is not one…) is
 * the file's fault; a system error reading the copy (its `code`: EIO, ENOSPC…) is not, and goes on as it is.
 */
function zipFailure(err: unknown): unknown {
  if (err instanceof UnreadableFileError || typeof (err as { code?: unknown })?.code === 'string') return err;
  // more parts than the limit: the same words as the upload's refusal
  if (err instanceof BadRequestError) return new UnreadableFileError(`${CANNOT_READ}: ${err.message}`);
  return new UnreadableFileError(`${CANNOT_READ}: ${BROKEN_ZIP}`);
}

/**
 * Opens the XLSX file `file` (a copy in the work folder): the preview's own reading of which part is which sheet
 * (`workbookLayout`), every shared string in memory (the upload's inspection bounds their count and bytes), and
 * the date styles. The caller closes it.
 */
export async function openWorkbook(file: string, maxEntries: number): Promise<LoaderWorkbook> {
  const zip = await openZipFile(file).catch((err: unknown) => {
    throw zipFailure(err);
  });
  try {
    const entries = await readEntries(zip, maxEntries).catch((err: unknown) => {
      throw zipFailure(err);
    });
    const layout = await workbookLayout(zip, entries);
    const strings: string[] = [];
    if (layout.sharedStrings) {
      await readSharedStrings(
        zip,
        layout.sharedStrings,
        () => true,
        (index, text) => {
          strings[index] = text;
        },
      );
    }
    const sheets: LoaderWorkbook['sheets'] = [];
    const taken = new Set<string>();
    for (const { name, part } of layout.sheets) {
      if (!part || taken.has(part.fileName)) continue;
      taken.add(part.fileName);
      sheets.push({ name, part });
    }
    // a part the workbook does not list is named by its place, never as another sheet is (names are unique
    // in a workbook, without regard to case; comparisons pair sheets by name)
    const names = new Set(sheets.map((s) => s.name.toLowerCase()));
    for (const part of layout.worksheets) {
      if (taken.has(part.fileName)) continue;
      const base = `Sheet${sheets.length + 1}`;
      let name = base;
      for (let n = 2; names.has(name.toLowerCase()); n++) name = `${base} (${n})`;
      names.add(name.toLowerCase());
      sheets.push({ name, part });
    }
    return {
      zip,
      sheets,
      strings,
      dates: await dateStyles(zip, layout.styles),
      date1904: layout.date1904,
      close: () => zip.close(),
    };
  } catch (err) {
    zip.close();
    throw err;
  }
}

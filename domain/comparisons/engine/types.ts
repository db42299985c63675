import type { InferredType } from '../../reports/engine';

/** How the rows of a sheet were paired (README "Comparisons"). */
export type Matching = 'key' | 'inferred_key' | 'multiset';

export interface TypeChange {
  column: string;
  from: InferredType;
  to: InferredType;
}

export interface SheetComparison {
  /** the sheet's name in the target (in the base for a removed sheet) */
  name: string;
  baseName: string;
  matching: Matching;
  /** the key columns used (empty for multiset matching) */
  keyColumns: string[];
  baseRows: number;
  targetRows: number;
  added: number;
  removed: number;
  changed: number;
  unchanged: number;
  /** key values (occurrence order) that appear more than once in base or target; 0 with multiset matching */
  duplicateKeys: number;
  columnsAdded: string[];
  columnsRemoved: string[];
  typeChanges: TypeChange[];
}

export interface ComparisonSummary {
  sheetsAdded: string[];
  sheetsRemoved: string[];
  /** totals over the sheets compared (sheets added or removed count no rows) */
  added: number;
  removed: number;
  changed: number;
  unchanged: number;
  /** column names; in a workbook of several sheets `<sheet>!<column>`; a removed sheet's columns are removed */
  columnsAdded: string[];
  columnsRemoved: string[];
  typeChanges: TypeChange[];
  sheets: SheetComparison[];
}

export interface ChangedColumn {
  column: string;
  /** raw text as typed (null: an empty or null cell) */
  old: string | null;
  new: string | null;
}

/**
 * One row change (values are shown to callers who can see the file, never in events or logs). The engine
 * hands each over as the JSON text of this shape (CompareOptions.onChanges), written by DuckDB.
 */
export interface RowChange {
  sheet: string;
  kind: 'added' | 'removed' | 'changed';
  /** the key columns' raw text (the target's; the base's for `removed`); null with multiset matching */
  key: Record<string, string | null> | null;
  baseRow: number | null;
  targetRow: number | null;
  /** `changed` only: the shared columns whose values differ */
  columns: ChangedColumn[] | null;
}

/** A named key column that one version lacks: 400 for a requested comparison. */
export class MissingKeyColumn extends Error {
  constructor(
    public readonly column: string,
    public readonly side: 'base' | 'target',
    public readonly sheet: string,
  ) {
    super(`key column "${column}" is not in the ${side} version (sheet "${sheet}")`);
    this.name = 'MissingKeyColumn';
  }
}

/**
 * The first pass over a version loaded `unchecked` (no checking pass: its types came from its report)
 * failed — DuckDB's strict reader refuses the file — for one version or both (`sides`). The caller loads each
 * of them again the checked way (which takes the normalising path for such files) and compares again; nothing
 * was written yet. DuckDB's error is not kept: a CSV error quotes the offending line (cell values).
 */
export class UncheckedReadFailed extends Error {
  constructor(public readonly sides: ReadonlyArray<'base' | 'target'>) {
    super(`the ${sides.join(' and ')} version${sides.length > 1 ? 's' : ''} cannot be read as it is`);
    this.name = 'UncheckedReadFailed';
  }
}

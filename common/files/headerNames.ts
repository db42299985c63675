/**
 * Column names from a header row, shared by the preview and the report profile so both show the same
 * names: an empty (or whitespace-only) header cell becomes `column N` (N its 1-based position); a name
 * seen before in the row gets ` (2)`, ` (3)`, … (the first suffix not taken by another column).
 */
export type HeaderCell = string | number | boolean | null | undefined;

export function headerNames(raw: ReadonlyArray<HeaderCell>, width = raw.length): string[] {
  const names: string[] = [];
  const taken = new Set<string>();
  for (let i = 0; i < width; i++) {
    const cell = raw[i];
    const text = cell === null || cell === undefined ? '' : String(cell);
    const base = text.trim() === '' ? `column ${i + 1}` : text;
    let name = base;
    for (let n = 2; taken.has(name); n++) name = `${base} (${n})`;
    taken.add(name);
    names.push(name);
  }
  return names;
}

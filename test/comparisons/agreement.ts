/**
 * The check ./engine.test.ts and ./engineLazy.test.ts share: a way of comparing run on the random pairs
 * (./randomPairs.ts), every count and every change against the reference (./reference.ts).
 */
import { expect } from 'chai';
import { laneNumbers, onEach } from '../../common/lanes';
import type { ComparisonSummary, Matching, RowChange } from '../../domain/comparisons/engine';
import { compareRef, type Table } from './reference';
import { csv, randomPair } from './randomPairs';

function withoutChanges<T extends { changes: unknown }>(r: T): Omit<T, 'changes'> {
  const { changes: _changes, ...rest } = r;
  return rest;
}

/** the changes in an order that does not depend on how they were listed */
export function canonical(changes: Array<Omit<RowChange, 'sheet'>>): string[] {
  return changes.map((c) => JSON.stringify([c.kind, c.key, c.baseRow, c.targetRow, c.columns])).sort();
}

/**
 * Runs `compare` on the pairs of seeds 1…`seeds` and expects the reference's result for each; returns how
 * many pairs each matching took (the caller checks the generator exercised them all). `lanes` pairs go at
 * once, each lane numbered (the caller gives each its own connections); the first failure stops every lane.
 */
export async function expectAgreementOnRandomPairs(
  compare: (
    pair: { base: Table; target: Table; keyColumns?: string[] },
    lane: number,
  ) => Promise<{ summary: ComparisonSummary; changes: RowChange[] }>,
  seeds = 240,
  lanes = 1,
): Promise<Record<Matching, number>> {
  const matchings: Record<Matching, number> = { key: 0, inferred_key: 0, multiset: 0 };
  const check = async (seed: number, lane: number) => {
    const pair = randomPair(seed);
    const { base, target, keyColumns } = pair;
    const expected = compareRef(base, target, keyColumns);
    const { summary, changes } = await compare(pair, lane);
    const s = summary.sheets[0];
    const label = `seed ${seed}\nbase:\n${csv(base)}target:\n${csv(target)}key: ${JSON.stringify(keyColumns)}`;
    expect(
      {
        matching: s.matching,
        keyColumns: s.keyColumns,
        added: s.added,
        removed: s.removed,
        changed: s.changed,
        unchanged: s.unchanged,
        columnsAdded: s.columnsAdded,
        columnsRemoved: s.columnsRemoved,
        typeChanges: s.typeChanges,
      },
      label,
    ).to.deep.equal(withoutChanges(expected));
    expect(canonical(changes), label).to.deep.equal(canonical(expected.changes));
    expect(s.added + s.changed + s.unchanged).to.equal(target.rows.length);
    expect(s.removed + s.changed + s.unchanged).to.equal(base.rows.length);
    matchings[s.matching]++;
  };
  // every lane settled before the first failure is thrown (no query left running when the test ends)
  await onEach(
    laneNumbers(lanes),
    Array.from({ length: seeds }, (_, i) => i + 1),
    (lane, seed) => check(seed, lane),
  );
  expect(Object.values(matchings).reduce((a, b) => a + b, 0)).to.equal(seeds);
  return matchings;
}

/**
 * Prints precision and recall per kind, at the column level, of the sensitive-data column decision rule on
 * the labelled evaluation set (test/sensitive/evaluationSet.ts). `npm run eval:sensitive` (after a build).
 * Exits 1 when a kind is under the target of 0.95 / 0.95.
 */
import { SENSITIVE_KINDS } from '../domain/sensitive/detectors';
import { decideLikeTheReport, evaluationSet, scoreEvaluation } from '../test/sensitive/evaluationSet';

const TARGET = 0.95;
const columns = evaluationSet();
const { scores, mistakes } = scoreEvaluation(columns, decideLikeTheReport, SENSITIVE_KINDS);
console.log(`${columns.length} labelled columns`);
console.log('kind                   precision  recall   tp  fp  fn');
for (const s of scores) {
  console.log(
    `${s.kind.padEnd(22)} ${s.precision.toFixed(3).padStart(9)} ${s.recall.toFixed(3).padStart(7)} ${String(s.truePositives).padStart(4)} ${String(s.falsePositives).padStart(3)} ${String(s.falseNegatives).padStart(3)}`,
  );
}
for (const m of mistakes) console.log(`  - ${m}`);
const missed = scores.filter((s) => s.precision < TARGET || s.recall < TARGET);
if (missed.length > 0) {
  console.log(`under the ${TARGET} target: ${missed.map((s) => s.kind).join(', ')}`);
  process.exitCode = 1;
}

import { expect } from 'chai';
import { SENSITIVE_KINDS } from '../../domain/sensitive/detectors';
import { decideLikeTheReport, evaluationSet, scoreEvaluation } from './evaluationSet';

describe('sensitive data: the labelled evaluation set', () => {
  it('reaches precision and recall of at least 0.95 for every kind, at the column level', () => {
    const columns = evaluationSet();
    for (const kind of SENSITIVE_KINDS) {
      expect(
        columns.some((c) => c.kinds.includes(kind)),
        `a column of ${kind}`,
      ).to.equal(true);
    }
    expect(columns.filter((c) => c.kinds.length === 0).length).to.be.greaterThan(20);
    const { scores, mistakes } = scoreEvaluation(columns, decideLikeTheReport, SENSITIVE_KINDS);
    for (const s of scores) {
      expect(s.precision, `${s.kind} precision; ${mistakes.join('; ')}`).to.be.at.least(0.95);
      expect(s.recall, `${s.kind} recall; ${mistakes.join('; ')}`).to.be.at.least(0.95);
    }
  });
});

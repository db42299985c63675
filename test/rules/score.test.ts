import { expect } from 'chai';
import {
  decimalRatio,
  qualityScore,
  roundHalfUp,
  ratio,
  ruleStatus,
  type ScoredRule,
} from '../../domain/rules/score';

describe('quality score (exact integer ratios)', () => {
  it("computes the appendix's worked example: 98.63", () => {
    const rules: ScoredRule[] = [
      // email not_null: 20 nulls in 1,000 rows
      { dimension: 'completeness', evaluatedUnits: 1000, failedUnits: 20, status: 'passed' },
      // email pattern: 49 of 980 non-null fail
      { dimension: 'validity', evaluatedUnits: 980, failedUnits: 49, status: 'failed' },
      // age range 0–120: 19 of 950 non-null fail
      { dimension: 'validity', evaluatedUnits: 950, failedUnits: 19, status: 'failed' },
      // id unique
      { dimension: 'uniqueness', evaluatedUnits: 1000, failedUnits: 0, status: 'passed' },
      // row_count 500–5000: one unit
      { dimension: 'volume', evaluatedUnits: 1, failedUnits: 0, status: 'passed' },
    ];
    const result = qualityScore(rules);
    expect(result.score).to.equal(98.63);
    expect(result.dimensions).to.deep.equal({
      completeness: 98,
      validity: 96.5,
      uniqueness: 100,
      volume: 100,
    });
    expect(result).to.include({ rulesPassed: 3, rulesEvaluated: 5, unitsPassed: 3843, unitsEvaluated: 3931 });
  });

  it('leaves rules without units out, and is null when no rule applies', () => {
    expect(qualityScore([]).score).to.equal(null);
    const none: ScoredRule = {
      dimension: 'validity',
      evaluatedUnits: 0,
      failedUnits: 0,
      status: 'not_applicable',
    };
    expect(qualityScore([none]).score).to.equal(null);
    const half: ScoredRule = {
      dimension: 'completeness',
      evaluatedUnits: 2,
      failedUnits: 1,
      status: 'failed',
    };
    expect(qualityScore([none, half])).to.deep.include({ score: 50, rulesEvaluated: 1 });
  });

  it('rounds half-up from the exact ratio (a binary float would round 1.005 down)', () => {
    expect(roundHalfUp(ratio(1005, 100000))).to.equal(1.01);
    expect(roundHalfUp(ratio(98625, 100000))).to.equal(98.63);
    expect(roundHalfUp(ratio(1, 3))).to.equal(33.33);
    expect(roundHalfUp(ratio(2, 3))).to.equal(66.67);
  });

  it('status from severity and tolerance, compared exactly', () => {
    const tenth = decimalRatio(0.1);
    expect(tenth).to.deep.equal({ num: 1n, den: 10n });
    expect(ruleStatus({ evaluatedUnits: 10, failedUnits: 1 }, 'error', tenth)).to.equal('passed');
    expect(ruleStatus({ evaluatedUnits: 10, failedUnits: 2 }, 'error', tenth)).to.equal('failed');
    expect(ruleStatus({ evaluatedUnits: 10, failedUnits: 2 }, 'warn', tenth)).to.equal('warn');
    expect(ruleStatus({ evaluatedUnits: 0, failedUnits: 0 }, 'error', tenth)).to.equal('not_applicable');
    expect(ruleStatus({ evaluatedUnits: 3, failedUnits: 0 }, 'error', decimalRatio(0))).to.equal('passed');
    expect(decimalRatio(1e-7)).to.deep.equal({ num: 1n, den: 10000000n });
  });
});

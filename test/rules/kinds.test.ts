import { expect } from 'chai';
import { ruleProblems } from '../../domain/rules/kinds';

describe('quality rules: kinds and params', () => {
  it('accepts each kind with its params', () => {
    expect(ruleProblems({ kind: 'not_null', column: 'a', params: {} })).to.deep.equal([]);
    expect(ruleProblems({ kind: 'range', column: 'a', params: { min: -1.5, max: 3 } })).to.deep.equal([]);
    expect(ruleProblems({ kind: 'length', column: 'a', params: { max: 3 } })).to.deep.equal([]);
    expect(ruleProblems({ kind: 'pattern', column: 'a', params: { regex: '^[A-Z]{2}\\d+$' } })).to.deep.equal(
      [],
    );
    expect(ruleProblems({ kind: 'allowed_values', column: 'a', params: { values: ['x'] } })).to.deep.equal(
      [],
    );
    expect(ruleProblems({ kind: 'type', column: 'a', params: { type: 'date' } })).to.deep.equal([]);
    expect(ruleProblems({ kind: 'row_count', column: null, params: { min: 1 } })).to.deep.equal([]);
  });

  it('lists every problem: params of another kind, min > max, missing column', () => {
    expect(
      ruleProblems({ kind: 'range', column: null, params: { min: 5, max: 1, regex: 'x' } }),
    ).to.deep.equal([
      'body.column: required for a range rule',
      'body.params.regex: not a param of a range rule (it takes min, max)',
      'body.params: min (5) is greater than max (1)',
    ]);
    expect(ruleProblems({ kind: 'row_count', column: 'a', params: {} })).to.deep.equal([
      'body.column: a row_count rule applies to the whole sheet and takes no column',
      'body.params: a row_count rule needs min, max or both',
    ]);
    expect(ruleProblems({ kind: 'length', column: 'a', params: { min: 1.5 } })).to.deep.equal([
      'body.params.min: must be an integer',
    ]);
    // names every object has through its prototype are not params either
    const inherited = JSON.parse('{"constructor":{"any":["junk"]},"toString":1,"__proto__":2}') as Record<
      string,
      unknown
    >;
    expect(ruleProblems({ kind: 'not_null', column: 'a', params: inherited })).to.deep.equal([
      'body.params.constructor: not a param of a not_null rule (it takes none)',
      'body.params.toString: not a param of a not_null rule (it takes none)',
      'body.params.__proto__: not a param of a not_null rule (it takes none)',
    ]);
  });

  it('refuses a regex RE2 does not accept (backreferences, lookaround) and too many values', () => {
    expect(ruleProblems({ kind: 'pattern', column: 'a', params: { regex: '(a)\\1' } })[0]).to.match(
      /^body\.params\.regex: not a valid RE2 regular expression/,
    );
    expect(ruleProblems({ kind: 'pattern', column: 'a', params: { regex: '(?=a)b' } })).to.have.length(1);
    expect(
      ruleProblems({ kind: 'allowed_values', column: 'a', params: { values: Array(1001).fill('x') } }),
    ).to.deep.equal(['body.params.values: at most 1000 values (got 1001)']);
  });
});

import { expect } from 'chai';
import {
  rulesStep,
  type BuildRule,
  type QualitySection,
  type RuleOutcome,
} from '../../domain/rules/evaluate';
import { analyseCsv, analyseXlsx } from './engineHelpers';

let seq = 0;
function rule(
  kind: BuildRule['kind'],
  column: string | null,
  params: Record<string, unknown> = {},
  extra: Partial<BuildRule> = {},
): BuildRule {
  seq += 1;
  return {
    id: `r${seq}`,
    name: `${kind} ${column ?? ''}`,
    kind,
    column,
    params,
    severity: 'error',
    tolerance: '0',
    ...extra,
  };
}

async function quality(csv: string, rules: BuildRule[]): Promise<QualitySection> {
  const result = await analyseCsv(csv, [rulesStep(rules)]);
  return result.sections.quality as QualitySection;
}

function pick(o: RuleOutcome) {
  return {
    status: o.status,
    evaluatedUnits: o.evaluatedUnits,
    failedUnits: o.failedUnits,
    failingRows: o.failingRows,
  };
}

// rows 2..7 as a spreadsheet numbers them (the header is row 1); row 5 has nulls, row 6 repeats row 2's id
const CSV = [
  'id,email,age,code,status,joined',
  '1,anna@example.com,34,AB-1,active,2024-01-05',
  '2,not-an-email,130,ab-2,active,2024-02-30',
  '3,li@example.org,-1,CD-33,paused,2023-12-31',
  '4,,,,closed,',
  '1,omar@example.net,41,EF-7,gone,2024-03-01',
  '6, ben@example.com ,n/a,GH-8,active,2024-03-02',
].join('\n');

describe('quality rules: evaluation in the report pass (DuckDB)', () => {
  it('every rule kind, with units, failed units and failing row numbers (never values)', async () => {
    const q = await quality(CSV, [
      rule('not_null', 'email'),
      rule('unique', 'id'),
      rule('range', 'age', { min: 0, max: 120 }),
      rule('length', 'code', { min: 4, max: 4 }),
      rule('pattern', 'code', { regex: '[A-Z]{2}-\\d+' }),
      rule('allowed_values', 'status', { values: ['active', 'paused', 'closed'] }),
      rule('type', 'joined', { type: 'date' }),
      rule('row_count', null, { min: 1, max: 5 }),
    ]);
    const [notNull, unique, range, length, pattern, allowed, type, rowCount] = q.rules.map(pick);
    expect(notNull).to.deep.equal({ status: 'failed', evaluatedUnits: 6, failedUnits: 1, failingRows: [5] });
    expect(unique).to.deep.equal({ status: 'failed', evaluatedUnits: 6, failedUnits: 1, failingRows: [6] });
    // n/a is null: left out; 130 and -1 fail
    expect(range).to.deep.equal({ status: 'failed', evaluatedUnits: 4, failedUnits: 2, failingRows: [3, 4] });
    expect(length).to.deep.equal({ status: 'failed', evaluatedUnits: 5, failedUnits: 1, failingRows: [4] });
    expect(pattern).to.deep.equal({ status: 'failed', evaluatedUnits: 5, failedUnits: 1, failingRows: [3] });
    expect(allowed).to.deep.equal({ status: 'failed', evaluatedUnits: 6, failedUnits: 1, failingRows: [6] });
    // 2024-02-30 is no date
    expect(type).to.deep.equal({ status: 'failed', evaluatedUnits: 5, failedUnits: 1, failingRows: [3] });
    expect(rowCount).to.deep.equal({ status: 'failed', evaluatedUnits: 1, failedUnits: 1, failingRows: [] });
    expect(q.failedErrorRules).to.equal(8);
    expect(JSON.stringify(q.rules)).not.to.match(/not-an-email|130|CD-33|gone/);
  });

  it('passing rules, tolerance, warn severity and not applicable', async () => {
    const q = await quality(CSV, [
      rule('range', 'age', { min: -5, max: 200 }),
      rule('allowed_values', 'status', { values: ['active', 'paused', 'closed'] }, { tolerance: '0.2' }),
      rule('allowed_values', 'status', { values: ['active'] }, { tolerance: '0.2', severity: 'warn' }),
      rule('not_null', 'no such column'),
      rule('pattern', 'email', { regex: '\\S+' }),
    ]);
    expect(q.rules.map((r) => r.status)).to.deep.equal([
      'passed',
      'passed',
      'warn',
      'not_applicable',
      'passed',
    ]);
    expect(q.rules[3]).to.include({ evaluatedUnits: 0, failedUnits: 0 });
    expect(q.failedErrorRules).to.equal(0);
  });

  it('range: only a value the report counts as a number passes (infinity and 1_000 are not numbers)', async () => {
    const q = await quality('price\n12\n 7.5 \ninf\n-Infinity\n1_000\n1e3\n+5\n', [
      rule('range', 'price', { min: 0 }),
      rule('range', 'price', { max: 2000 }),
      rule('range', 'price', { min: -1e9, max: 1e9 }),
    ]);
    // rows 4–6 are text in the profile (the column is text), so they fail each rule whatever its bounds
    const fails = { status: 'failed', evaluatedUnits: 7, failedUnits: 3, failingRows: [4, 5, 6] };
    expect(q.rules.map(pick)).to.deep.equal([fails, fails, fails]);
  });

  it('rules read a spreadsheet export as the report does: currency and percent signs, slash dates, error values', async () => {
    // a United States export: dollars, percent, month-first dates, an error value (null)
    const q = await quality(
      'amount,discount,day\n"$1,234.50",5%,3/15/2024\n-$5,150%,4/1/2024\n($20.00),#DIV/0!,2/30/2024\n',
      [
        rule('range', 'amount', { min: 0 }),
        rule('range', 'discount', { max: 1 }),
        rule('not_null', 'discount'),
        rule('pattern', 'day', { regex: '[0-9]{4}-[0-9]{2}-[0-9]{2}' }),
      ],
    );
    expect(q.rules.map(pick)).to.deep.equal([
      // -5 and -20 are below 0
      { status: 'failed', evaluatedUnits: 3, failedUnits: 2, failingRows: [3, 4] },
      // 150% is 1.5
      { status: 'failed', evaluatedUnits: 2, failedUnits: 1, failingRows: [3] },
      // #DIV/0! is null
      { status: 'failed', evaluatedUnits: 3, failedUnits: 1, failingRows: [4] },
      // the dates rewritten as ISO dates match; 2/30/2024 is no day and stays as written
      { status: 'failed', evaluatedUnits: 3, failedUnits: 1, failingRows: [4] },
    ]);
  });

  it('range on a number column (cast without the class test) counts as on a text column of the same cells', async () => {
    // `num` holds numbers and nulls only (its type is decimal: each value is cast as it is); `mixed` holds the
    // same cells and, where `num` is empty, one text, the last row (its type is text: each value is classed first). Every bound
    // fails the same rows of both, and the text fails in `mixed` too
    const cells = [
      '12',
      ' 7.5 ',
      '+5',
      '-3',
      '1e2',
      '.5',
      '5.',
      '007',
      'n/a',
      '',
      '999999999999999999999',
      '-0',
    ];
    const csv = ['num,mixed', ...cells.map((c) => `${c},${c}`), ',abc'].join('\n');
    const bounds = [{ min: 0 }, { max: 10 }, { min: -3, max: 12 }, { min: 1e20 }];
    const q = await quality(
      csv,
      bounds.flatMap((b) => [rule('range', 'num', b), rule('range', 'mixed', b)]),
    );
    for (let k = 0; k < bounds.length; k++) {
      const [num, mixed] = [pick(q.rules[2 * k]), pick(q.rules[2 * k + 1])];
      expect(num.evaluatedUnits, JSON.stringify(bounds[k])).to.equal(cells.length - 2);
      expect(mixed, JSON.stringify(bounds[k])).to.deep.include({
        evaluatedUnits: num.evaluatedUnits + 1,
        failedUnits: num.failedUnits + 1,
        failingRows: [...num.failingRows, cells.length + 2],
      });
    }
    // by hand for one bound: 0..: -3 (row 5) and -0 is 0 (passes)
    expect(pick(q.rules[0])).to.deep.include({ failedUnits: 1, failingRows: [5] });
  });

  it('a column of nulls only: not_null fails every row, other column rules are not applicable', async () => {
    const q = await quality('a,b\n1,\n2,\n', [rule('not_null', 'b'), rule('length', 'b', { max: 3 })]);
    expect(q.rules.map(pick)).to.deep.equal([
      { status: 'failed', evaluatedUnits: 2, failedUnits: 2, failingRows: [2, 3] },
      { status: 'not_applicable', evaluatedUnits: 0, failedUnits: 0, failingRows: [] },
    ]);
  });

  it('unique compares trimmed text; a pattern the engine refuses leaves only that rule not applicable', async () => {
    const q = await quality('k,v\na,x\n a ,y\nb,x\na,z\n', [
      rule('unique', 'k'),
      rule('unique', 'v'),
      rule('pattern', 'v', { regex: '(x' }),
      rule('allowed_values', 'v', { values: ['x', 'y'] }),
    ]);
    expect(q.rules.map(pick)).to.deep.equal([
      { status: 'failed', evaluatedUnits: 4, failedUnits: 2, failingRows: [3, 5] },
      { status: 'failed', evaluatedUnits: 4, failedUnits: 1, failingRows: [4] },
      { status: 'not_applicable', evaluatedUnits: 0, failedUnits: 0, failingRows: [] },
      { status: 'failed', evaluatedUnits: 4, failedUnits: 1, failingRows: [5] },
    ]);
    expect(q.rules[2].problem).to.match(/^the engine could not evaluate this rule/);
  });

  it('a column rule applies to every sheet that has the column; row_count counts each sheet', async () => {
    const result = await analyseXlsx(
      (wb) => {
        const a = wb.addWorksheet('Orders');
        a.addRows([
          ['sku', 'qty'],
          ['A1', 3],
          ['B2', -1],
          ['C3', 4],
        ]);
        const b = wb.addWorksheet('Returns');
        b.addRows([
          ['qty', 'reason'],
          [-2, 'broken'],
          [1, 'late'],
        ]);
        const c = wb.addWorksheet('Notes');
        c.addRows([['text'], ['no qty here']]);
      },
      [rulesStep([rule('range', 'qty', { min: 0 }), rule('row_count', null, { min: 2 })])],
    );
    const [range, rowCount] = (result.sections.quality as QualitySection).rules;
    expect(range).to.deep.include({
      status: 'failed',
      evaluatedUnits: 5,
      failedUnits: 2,
      failingRows: [3, 2],
    });
    expect(range.sheets).to.deep.equal([
      { sheet: 'Orders', evaluatedUnits: 3, failedUnits: 1, failingRows: [3] },
      { sheet: 'Returns', evaluatedUnits: 2, failedUnits: 1, failingRows: [2] },
    ]);
    // Notes has one data row: row_count fails there only
    expect(rowCount).to.deep.include({ status: 'failed', evaluatedUnits: 3, failedUnits: 1 });
  });

  it('lists at most 10 failing row numbers', async () => {
    const csv = ['v', ...Array.from({ length: 25 }, () => 'x')].join('\n');
    const [r] = (await quality(csv, [rule('allowed_values', 'v', { values: ['y'] })])).rules;
    expect(r.failedUnits).to.equal(25);
    expect(r.failingRows).to.deep.equal([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  });

  it('the score of a small file worked out by hand, default rules included', async () => {
    // 4 data rows (rows 2..5), columns id (integers) and name (one null)
    const q = await quality('id,name\n1,a\n2,\n3,c\nx,d\n', [rule('unique', 'id')]);
    // company rule: unique id, 4 units, 0 fail → p 1 (uniqueness)
    // defaults: completeness id 4/4 = 1, name 3/4 → completeness mean (1 + 3/4)/2 = 7/8
    //   validity id: expected type? 3 of 4 integers = 75% < 90% → text, 4/4 valid = 1; name text 3/3 = 1 → 1
    //   duplicate rows: none → 1 (uniqueness: mean(1, 1) = 1); volume: rows > 0 → 1
    // score = 100 × (7/8 + 1 + 1 + 1) / 4 = 96.875 → 96.88
    expect(q.score).to.equal(96.88);
    expect(q.dimensions).to.deep.equal({ completeness: 87.5, validity: 100, uniqueness: 100, volume: 100 });
    expect(q).to.include({
      rulesEvaluated: 7,
      rulesPassed: 6,
      unitsEvaluated: 4 + 8 + 7 + 1 + 1,
      unitsPassed: 20,
    });
  });
});

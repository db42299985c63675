import { expect } from 'chai';
import { sensitiveStep, type SensitiveSection } from '../../domain/sensitive/step';
import { rulesStep } from '../../domain/rules/evaluate';
import { analyseCsv } from '../rules/engineHelpers';

const EMAILS = [
  'anna.smith@example.com',
  'li.chen@example.org',
  'omar.khan@example.net',
  'emma.brown@example.com',
];
const CARDS = ['4111 1111 1111 1111', '5500 0000 0000 0004', '4012 8888 8888 1881', '5555 5555 5555 4444'];
const KEY = 'AKIAIOSFODNN7EXAMPLE';

describe('sensitive data: detection in the report pass (DuckDB)', () => {
  it('flags columns with their kinds and shares, and withholds their values from the profile', async () => {
    const rows = EMAILS.map((e, i) => `${i + 1},${e},${CARDS[i]},${i === 2 ? KEY : `note ${i}`},${1000 + i}`);
    const csv = ['id,contact,card,notes,amount', ...rows].join('\n');
    const result = await analyseCsv(csv, [sensitiveStep(), rulesStep([])]);
    const section = result.sections.sensitiveData as SensitiveSection;
    expect(section.columns).to.deep.equal([
      { sheet: result.loaded.sheets[0].name, column: 'contact', kinds: [{ kind: 'email', share: 1 }] },
      { sheet: result.loaded.sheets[0].name, column: 'card', kinds: [{ kind: 'payment_card', share: 1 }] },
      {
        sheet: result.loaded.sheets[0].name,
        column: 'notes',
        kinds: [{ kind: 'aws_access_key_id', share: 0.25 }],
      },
    ]);
    const text = JSON.stringify(result, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v));
    for (const value of [...EMAILS, ...CARDS, KEY, ...CARDS.map((c) => c.replace(/ /g, ''))]) {
      expect(text, value).not.to.include(value);
    }
    const columns = result.profile.sheets[0].columnProfiles;
    expect(columns.find((c) => c.name === 'contact')).to.include({ min: null, max: null });
    expect(columns.find((c) => c.name === 'contact')!.topValues).to.deep.equal([]);
    // an unflagged column keeps its values
    expect(columns.find((c) => c.name === 'amount')).to.include({ min: 1000, max: 1003 });
  });
});

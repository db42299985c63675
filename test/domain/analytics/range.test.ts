/** The analytics range and its periods (domain/analytics/series.ts analyticsRange), without HTTP. */
import { expect } from 'chai';
import { analyticsRange } from '../../../domain/analytics/series';

describe('analytics range', () => {
  const now = new Date('2026-11-23T15:00:00Z');

  it('defaults to the last 30 days by day, today included', () => {
    const r = analyticsRange({}, now);
    expect(r).to.include({ from: '2026-10-25', to: '2026-11-23', granularity: 'day' });
    expect(r.buckets).to.have.length(30);
    expect(r.buckets[0]).to.deep.equal({ key: '2026-10-25', start: '2026-10-25', end: '2026-10-25' });
  });

  it('clips ISO weeks (Monday first) and months to the range', () => {
    const w = analyticsRange({ from: '2026-11-18', to: '2026-11-23', granularity: 'week' }, now);
    expect(w.buckets).to.deep.equal([
      { key: '2026-11-16', start: '2026-11-18', end: '2026-11-22' },
      { key: '2026-11-23', start: '2026-11-23', end: '2026-11-23' },
    ]);
    const m = analyticsRange({ from: '2024-02-10', to: '2024-03-01', granularity: 'month' }, now);
    expect(m.buckets).to.deep.equal([
      { key: '2024-02-01', start: '2024-02-10', end: '2024-02-29' },
      { key: '2024-03-01', start: '2024-03-01', end: '2024-03-01' },
    ]);
  });

  it('refuses more than 366 days, a reversed range and impossible dates', () => {
    expect(analyticsRange({ from: '2025-11-23', to: '2026-11-23' }, now).buckets).to.have.length(366);
    expect(() => analyticsRange({ from: '2025-11-22', to: '2026-11-23' }, now)).to.throw(/at most 366 days/);
    expect(() => analyticsRange({ from: '2026-11-24', to: '2026-11-23' }, now)).to.throw(/after/);
    expect(() => analyticsRange({ from: '2026-02-30' }, now)).to.throw(/YYYY-MM-DD/);
  });
});

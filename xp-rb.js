const { DuckDBInstance } = require('@duckdb/node-api');
const MB=1024*1024;
(async () => {
  const inst = await DuckDBInstance.create(':memory:', { threads: '2', memory_limit: '512MB' });
  const c = await inst.connect(); const c2 = await inst.connect();
  const cols = Array.from({length:12},(_,i)=>`'c${i+1}': 'VARCHAR'`).join(', ');
  const rd = (f) => `read_csv('${f}', delim=',', quote='"', escape='"', header=true, auto_detect=false, columns={${cols}}, null_padding=true, strict_mode=true, max_line_size=1048576, ignore_errors=false, parallel=true, buffer_size=2097152)`;
  for (const [s, f] of [['b','/tmp/xp/base.csv'],['t','/tmp/xp/target.csv']]) {
    await c.run(`CREATE VIEW ${s}_num AS SELECT (row_number() OVER () + 1)::BIGINT AS row_number, * FROM ${rd(f)}`);
    await c.run(`CREATE VIEW ${s}_raw AS SELECT * FROM ${rd(f)}`);
  }
  const t = async (label, fn) => { const s = performance.now(); await fn(); console.log(label, (performance.now()-s).toFixed(0), 'ms', 'rss', (process.memoryUsage().rss/MB).toFixed(0)); };
  // small tables
  const small = (conn, s) => conn.run(`CREATE OR REPLACE TABLE ${s}_small AS SELECT NULL::BIGINT AS rn, c1 AS v0, c1 AS raw, hash(c2,c3,c4,c5,c6,c7,c8,c9,c10,c11,c12) AS h FROM ${s}_raw`).then(()=>conn.run(`UPDATE ${s}_small SET rn = rowid + 2`));
  for (let i=0;i<3;i++) await t('small both', () => Promise.all([small(c,'b'), small(c2,'t')]));
  await c.run(`CREATE OR REPLACE TABLE j AS SELECT b.rn AS b_rn, t.rn AS t_rn, coalesce(b.raw, t.raw) AS k FROM b_small b FULL OUTER JOIN t_small t ON b.v0 = t.v0 WHERE b.rn IS NULL OR t.rn IS NULL OR b.h IS DISTINCT FROM t.h`);
  console.log((await (await c.runAndReadAll('select count(*) from j')).getRows()));
  const rbNum = (conn, s, rn) => conn.run(`CREATE OR REPLACE TABLE ${s}_rb AS SELECT row_number AS rn, [c1,c2,c3,c4,c5,c6,c7,c8,c9,c10,c11,c12]::VARCHAR[] AS v FROM ${s}_num WHERE row_number IN (SELECT ${rn} FROM j WHERE ${rn} IS NOT NULL)`);
  const rbKey = (conn, s, rn) => conn.run(`CREATE OR REPLACE TABLE ${s}_rb AS SELECT c1 AS k, [c1,c2,c3,c4,c5,c6,c7,c8,c9,c10,c11,c12]::VARCHAR[] AS v FROM ${s}_raw WHERE c1 IN (SELECT k FROM j WHERE ${rn} IS NOT NULL)`);
  for (let i=0;i<3;i++) { await t('readback by number, both', () => Promise.all([rbNum(c,'b','b_rn'), rbNum(c2,'t','t_rn')])); await t('readback by key, both', () => Promise.all([rbKey(c,'b','b_rn'), rbKey(c2,'t','t_rn')])); }
  for (let i=0;i<2;i++) { await t('readback by number, b only', () => rbNum(c,'b','b_rn')); await t('readback by key, b only', () => rbKey(c,'b','b_rn')); }
  await t('scan raw count', () => c.run(`SELECT count(*) FROM b_raw`));
})();

/**
 * The layer rules of eslint.config.mjs (issue 11): a deliberately wrong import in each layer fails lint with
 * the rule's message, and the allowed directions pass. The code is linted as if it were at the path given
 * (nothing is written), with the project's own configuration; type-aware rules are off for these snippets.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { ROOT } from './helpers/env';

const RULE = '@typescript-eslint/no-restricted-imports';

/** [where the code is, the import, a part of the expected message, or null when it must pass] */
const CASES: Array<[string, string, string | null]> = [
  // db/ imports nothing above it
  ['db/x.ts', "import { principalOf } from '../api/middlewares/authenticate';", 'api/ is an adapter'],
  ['db/models/X.ts', "import type { Scope } from '../../domain/identity/scopes';", 'below the domain'],
  ['db/x.ts', "import { reportWorkflow } from '../workflows/report';", 'does not import workflow modules'],
  ['db/x.ts', "import { Company } from './models';", null],
  // domain/: no Koa, no adapters, no workflow code; the shared definitions are allowed
  ['domain/identity/x.ts', "import type Koa from 'koa';", 'only the HTTP adapter'],
  ['domain/identity/x.ts', "import type { AppContext } from '../../api/context';", 'api/ is an adapter'],
  [
    'domain/identity/x.ts',
    "import { createActivities } from '../../activities';",
    'activities/ is an adapter',
  ],
  ['domain/files/x.ts', "import { reportWorkflow } from '../../workflows/report';", 'not workflow code'],
  ['domain/files/x.ts', "import { workflowIdentity } from '../../workflows/shared';", null],
  ['domain/files/x.ts', "import { reportStart } from '../../workflows/definitions/reports';", null],
  ['domain/identity/x.ts', "import { transact } from '../../db/transaction';", null],
  // common/ is infrastructure
  ['common/x.ts', "import { recordAudit } from '../domain/audit/record';", 'below the domain'],
  ['common/x.ts', "import { Company } from '../db/models';", 'does not import the database layer'],
  [
    'common/x.ts',
    "import { workflowIdentity } from '../workflows/shared';",
    'does not import workflow modules',
  ],
  // adapters import the domain, not each other
  [
    'api/routes/x/index.ts',
    "import { createActivities } from '../../../activities';",
    'activities/ is an adapter',
  ],
  ['api/routes/x/index.ts', "import { signIn } from '../../../domain/identity/signIn';", null],
  ['activities/x.ts', "import { createApp } from '../api/app';", 'api/ is an adapter'],
  [
    'activities/x.ts',
    "import { attemptFailedSignal } from '../workflows/webhookDelivery';",
    'not workflow code',
  ],
  // workflow code: the SDK's workflow side, shared definitions and activity TYPES only
  ['workflows/x.ts', "import { createActivities } from '../activities';", 'activity TYPES only'],
  ['workflows/x.ts', "import type { ReportActivities } from '../activities/reports';", null],
  ['workflows/x.ts', "import { Connection } from '@temporalio/client';", 'only @temporalio/workflow'],
  ['workflows/x.ts', "import { readFile } from 'node:fs';", 'Node built-ins'],
  ['workflows/x.ts', "import { loadConfig } from '../common/config';", 'no infrastructure'],
  ['workflows/x.ts', "import type { Scope } from '../domain/identity/scopes';", 'no domain code'],
  ['workflows/x.ts', "import { proxyActivities } from '@temporalio/workflow';", null],
  ['workflows/definitions/x.ts', "import type { Scope } from '../../domain/identity/scopes';", null],
  [
    'workflows/definitions/x.ts',
    "import { SCOPES } from '../../domain/identity/scopes';",
    'domain types only',
  ],
  // a capability's policy is sandbox code the definitions may re-export
  ['workflows/definitions/x.ts', "export { FAILURE } from '../../domain/webhooks/policy';", null],
  ['domain/webhooks/policy.ts', "import { createHash } from 'node:crypto';", 'Node built-ins'],
  ['domain/webhooks/policy.ts', "import { loadConfig } from '../../common/config';", 'no infrastructure'],
];

describe('lint: layer boundaries (issue 11)', function () {
  this.timeout(120_000);
  let eslint: ESLint;

  before(() => {
    eslint = new ESLint({ cwd: ROOT, overrideConfig: [tseslint.configs.disableTypeChecked] });
  });

  for (const [filePath, importLine, expected] of CASES) {
    it(`${filePath}: ${importLine} ${expected ? 'fails' : 'passes'}`, async () => {
      // only this rule's messages count (an unused import is another rule's business)
      const [result] = await eslint.lintText(`${importLine}\n`, { filePath: path.join(ROOT, filePath) });
      const messages = result.messages.filter((m) => m.ruleId === RULE).map((m) => m.message);
      if (expected) {
        expect(messages, `messages of ${filePath}`).to.have.length(1);
        expect(messages[0]).to.contain(expected);
      } else {
        expect(messages, `messages of ${filePath}`).to.deep.equal([]);
      }
    });
  }

  it('every temporary exception names a file that still exists (remove entries as the moves merge)', () => {
    const config = readFileSync(path.join(ROOT, 'eslint.config.mjs'), 'utf8');
    const list = /const TEMPORARY_LAYER_EXCEPTIONS = \[([\s\S]*?)\];/.exec(config)?.[1] ?? '';
    const files = [...list.matchAll(/^\s*'([^']+)',/gm)].map((m) => m[1]);
    for (const file of files) expect(existsSync(path.join(ROOT, file)), file).to.equal(true);
  });
});

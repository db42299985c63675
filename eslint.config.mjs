// @ts-check
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

/*
 * Layers (issue 11; README "Architecture", docs/architecture.md). Each layer says what its files must not
 * import; the most specific block is built from the same pieces, because ESLint applies only the last
 * matching setting of a rule to a file.
 *
 *   db/          models, migrations, unit of work: nothing above it (no domain, adapters or workflow code)
 *   common/      infrastructure (config, logger, errors, secrets, storage, Temporal client, mail): no domain,
 *                no db, no adapters, no workflow code
 *   domain/      commands, queries, access rules, presenters: no Koa, no adapters, no workflow code (the
 *                shared definitions in workflows/shared.ts and workflows/definitions/ are allowed)
 *   api/, activities/ (adapters): call the domain, not each other; start workflows through the shared
 *                definitions, never through workflow code
 *   workflows/   sandboxed workflow code: @temporalio/workflow and @temporalio/common, the shared
 *                definitions and activity TYPES only; no Node built-ins
 *   worker/, scripts/, test/, bench/: composition roots and tools, unrestricted
 */
/**
 * A relative import of the top-level folder `name` or anything in it: the top-level folders are siblings, so
 * such an import climbs out with ../ and then names the folder (package names like @temporalio/common never
 * match).
 */
const layer = (name) => `^(\\.\\./)+${name}(/.*)?$`;
/** workflows/ except the shared definitions (workflows/shared.ts, workflows/definitions/). */
const WORKFLOW_CODE_REGEX = '^(\\.\\./)+workflows(/(?!shared$|definitions(/|$)).*)?$';
/** A restriction of the relative imports of top-level folder `name`, with its message. */
const ban = (name, message) => ({ regex: layer(name), message });
const HTTP = {
  group: ['koa', 'koa-*', '@koa/*', 'busboy'],
  message: 'only the HTTP adapter (api/) sees HTTP requests (Koa, multipart parsing).',
};
const API = ban('api', 'api/ is an adapter: nothing below it or beside it imports it.');
const ACTIVITIES = ban(
  'activities',
  'activities/ is an adapter: call the domain, not the Temporal activities.',
);
const WORKER = ban('worker', 'worker/ is the composition root: nothing imports it.');
const DOMAIN = ban('domain', 'this layer is below the domain and cannot import it.');
const DB = ban('db', 'common/ is infrastructure: it does not import the database layer.');
/** Workflow code (the sandbox); the shared definitions (workflows/shared.ts, workflows/definitions/) are allowed. */
const WORKFLOW_CODE = {
  regex: WORKFLOW_CODE_REGEX,
  message:
    'import the shared workflow definitions (workflows/shared.ts, workflows/definitions/), not workflow code.',
};
const ANY_WORKFLOWS = {
  regex: layer('workflows'),
  message: 'this layer does not import workflow modules.',
};

const restrict = (patterns, paths = []) => ({
  'no-restricted-imports': 'off',
  '@typescript-eslint/no-restricted-imports': ['error', { paths, patterns }],
});

const sandboxPaths = nodeBuiltins.map((name) => ({
  name,
  message: 'Node built-ins cannot be used in workflow code (Temporal sandbox).',
}));

/**
 * TEMPORARY (issue 11): files that still break the layer rules while a move is merging (none now). The
 * coordinator removes each entry as its move merges (test/lint.test.ts fails on an entry whose file is gone);
 * a new entry needs a reason here.
 */
const TEMPORARY_LAYER_EXCEPTIONS = [];

const SHARED_DEFINITIONS = ['workflows/shared.ts', 'workflows/definitions/**/*.ts'];
/** Sandbox-safe domain modules the shared definitions may re-export (linted with the sandbox's rules). */
const DOMAIN_POLICIES = ['domain/*/policy.ts'];
/** domain/ except its sandbox-safe policies (domain/<capability>/policy). */
const DOMAIN_BUT_POLICIES_REGEX = '^(\\.\\./)+domain(/(?![^/]+/policy$).*)?$';

/** What workflow code may not import: all but the SDK's workflow side, shared definitions, activity types. */
function sandboxPatterns(domain) {
  return [
    HTTP,
    API,
    WORKER,
    domain,
    { ...DB, message: 'workflow code never touches the database: call an activity.' },
    { regex: layer('common'), message: 'workflow code imports no infrastructure (common/).' },
    {
      group: ['@temporalio/*', '!@temporalio/workflow', '!@temporalio/common'],
      message: 'workflow code imports only @temporalio/workflow and @temporalio/common of the SDK.',
    },
    { ...ACTIVITIES, allowTypeImports: true, message: 'workflow code imports activity TYPES only.' },
  ];
}

function layerRules() {
  const ignores = TEMPORARY_LAYER_EXCEPTIONS;
  return [
    {
      files: ['db/**/*.ts'],
      ignores,
      rules: restrict([HTTP, API, ACTIVITIES, WORKER, DOMAIN, ANY_WORKFLOWS]),
    },
    {
      files: ['common/**/*.ts'],
      ignores,
      rules: restrict([HTTP, API, ACTIVITIES, WORKER, DOMAIN, DB, ANY_WORKFLOWS]),
    },
    { files: ['domain/**/*.ts'], ignores, rules: restrict([HTTP, API, ACTIVITIES, WORKER, WORKFLOW_CODE]) },
    { files: ['api/**/*.ts'], ignores, rules: restrict([ACTIVITIES, WORKER, WORKFLOW_CODE]) },
    {
      files: ['activities/**/*.ts'],
      ignores,
      rules: restrict([HTTP, API, WORKER, { ...WORKFLOW_CODE, allowTypeImports: true }]),
    },
    // Workflow code runs inside Temporal's deterministic sandbox; the shared definitions are imported by
    // both sides and may name domain types (e.g. a delivery policy) for the inputs they describe.
    {
      files: ['workflows/**/*.ts'],
      ignores: [...ignores, ...SHARED_DEFINITIONS],
      rules: restrict(
        sandboxPatterns({
          ...DOMAIN,
          message: 'workflow code imports no domain code: its activities call it.',
        }),
        sandboxPaths,
      ),
    },
    {
      files: SHARED_DEFINITIONS,
      ignores,
      rules: restrict(
        sandboxPatterns({
          regex: DOMAIN_BUT_POLICIES_REGEX,
          allowTypeImports: true,
          message: 'shared definitions name domain types only (and re-export sandbox-safe domain policies).',
        }),
        sandboxPaths,
      ),
    },
    {
      // a capability's policy (domain/<capability>/policy.ts: constants and pure functions, e.g. retry
      // delays) is re-exported by the shared definitions into the sandbox, so it obeys the sandbox's rules
      files: DOMAIN_POLICIES,
      ignores,
      rules: restrict(
        [
          ...sandboxPatterns({
            ...DOMAIN,
            allowTypeImports: true,
            message: 'a domain policy is sandbox code: it names other domain modules by type only.',
          }),
          WORKFLOW_CODE,
        ],
        sandboxPaths,
      ),
    },
    // the temporary exceptions in workflows/ keep the sandbox rule at least
    ...ignores
      .filter((file) => file.startsWith('workflows/'))
      .map((file) => ({ files: [file], rules: restrict([], sandboxPaths) })),
  ];
}

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.local/**', 'eslint.config.mjs'] },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/require-await': 'off',
      // fires on the row-type assertions knex queries need; the assertions are the documentation here
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
    },
  },
  ...layerRules(),
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-expressions': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  prettier,
);

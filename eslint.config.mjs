// @ts-check
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

/** Workflow code: no Node built-ins, activity types only, and none of `more` (plus common, db, api). */
function sandboxImports(more) {
  return {
    'no-restricted-imports': 'off',
    '@typescript-eslint/no-restricted-imports': [
      'error',
      {
        paths: nodeBuiltins.map((name) => ({
          name,
          message: 'Node built-ins cannot be used in workflow code (Temporal sandbox).',
        })),
        patterns: [
          {
            group: ['**/activities/**'],
            allowTypeImports: true,
            message: 'workflow code imports activity types only.',
          },
          {
            group: ['**/common/**', '**/db/**', '**/api/**', ...more],
            message:
              'workflow code imports only @temporalio/workflow, shared definitions and activity types.',
          },
        ],
      },
    ],
  };
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
  {
    // Layers (issue 11), every capability under domain/: db/ imports nothing above it (db/models/ApiKey.ts still takes the
    // Scope type from api/routing, until the identity capability moves); domain code sees no Koa, no adapter
    // and no workflow code, only the shared workflow definitions.
    files: ['db/**/*.ts'],
    ignores: ['db/models/ApiKey.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/api/**', '**/domain/**', '**/workflows/**', '**/activities/**', '**/worker/**'],
              message: 'db/ imports nothing above it (models, migrations, unit of work only).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['domain/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['koa', 'koa-*', '@koa/*', 'busboy'],
              message: 'domain code never sees an HTTP request.',
            },
            {
              group: ['**/api/**', '**/activities/**', '**/worker/**'],
              message: 'adapters call the domain, not the reverse.',
            },
            {
              group: ['**/workflows/*', '!**/workflows/shared', '!**/workflows/definitions'],
              message: 'workflow code is for the sandbox: import workflows/definitions/* instead.',
            },
          ],
        },
      ],
    },
  },
  {
    // Workflow code runs inside Temporal's deterministic sandbox: Node built-ins are not available there.
    files: ['workflows/**/*.ts', 'domain/webhooks/policy.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({
            name,
            message: 'Node built-ins cannot be used in workflow code (Temporal sandbox).',
          })),
        },
      ],
    },
  },
  {
    // activities start and signal workflows through the shared definitions, never through workflow code
    files: ['activities/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/workflows/*', '!**/workflows/shared', '!**/workflows/definitions'],
              allowTypeImports: true,
              message: 'import the shared workflow definitions (workflows/definitions/*), not workflow code.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['workflows/webhook*.ts'],
    rules: sandboxImports(['**/domain/**']),
  },
  {
    // the shared definitions re-export the delivery policy (domain/webhooks/policy.ts, sandbox-safe)
    files: ['workflows/definitions/**/*.ts'],
    rules: sandboxImports([]),
  },
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

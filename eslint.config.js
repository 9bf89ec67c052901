// Lint with type information, plus the layer boundaries of ARCHITECTURE.md.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { importX } from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

const ioPackages = [
  'fastify',
  'fastify-plugin',
  'kysely',
  'pg',
  'pino',
  '@electric-sql/pglite',
  'prom-client',
];

/** A no-restricted-imports rule naming layers a folder must not reach. */
const forbid = (layers, message, extra = {}) => [
  'error',
  {
    patterns: [{ group: layers.map((l) => `**/${l}/**`), message }, ...(extra.patterns ?? [])],
    ...(extra.paths ? { paths: extra.paths } : {}),
  },
];

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      'dist/**',
      'coverage/**',
      'data/**',
      'charts/**',
      'eslint.config.js',
      'services/console/dist/**',
      'bench/*.cjs',
      // Loaded by node --import into the compiled API, outside the TypeScript project.
      'bench/event-loop-blocks.mjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // fastify plugins and handlers are async by contract, awaiting or not
      '@typescript-eslint/require-await': 'off',
      'no-eval': 'error',
      'no-new-func': 'error',
      '@typescript-eslint/no-implied-eval': 'error',
      'no-duplicate-imports': ['error', { allowSeparateTypeImports: true }],
      curly: ['error', 'all'],
    },
  },
  {
    // Size: a file holds one idea and a function one step (an exception is named and justified
    // inline, next to its eslint-disable comment). Comments and blank lines do not count:
    // they explain, and nobody should delete them to pass. Migrations are frozen history.
    files: ['services/**/*.{ts,tsx}', 'services/api/src/workers/*.mjs'],
    ignores: ['services/api/src/storage/migrations/**'],
    rules: {
      'max-lines': ['error', { max: 400, skipBlankLines: true, skipComments: true }],
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    // Grouping by copying the group on every item is quadratic in the group's size.
    files: ['services/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            "CallExpression[callee.property.name='set'] > ArrayExpression.arguments > SpreadElement CallExpression[callee.property.name='get']",
          message:
            'Copying a group to append one item is quadratic: use pushTo or groupBy from services/api/src/group-by.ts.',
        },
      ],
    },
  },
  {
    // A route registrar lists every route of one resource in one function, each a short
    // parse-call-present handler: its length is the length of the resource's route table.
    files: ['services/api/src/routes/*/index.ts'],
    rules: { 'max-lines-per-function': 'off' },
  },
  {
    // domain is pure: no other layer, no I/O, no clock, no randomness
    files: ['services/api/src/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': forbid(
        ['plugins', 'routes', 'storage', 'usecases', 'notify'],
        'domain/ is pure: pass data in, get data out.',
        {
          paths: ioPackages.map((name) => ({ name, message: 'domain/ does no I/O.' })),
          patterns: [{ group: ['node:*'], message: 'domain/ does no I/O.' }],
        },
      ),
      'no-restricted-globals': ['error', { name: 'Date', message: 'domain/ takes `now` as an argument.' }],
      'no-restricted-properties': [
        'error',
        { object: 'Math', property: 'random', message: 'domain/ takes randomness as an argument.' },
      ],
    },
  },
  {
    files: ['services/api/src/storage/**/*.ts'],
    rules: {
      'no-restricted-imports': forbid(
        ['plugins', 'routes', 'usecases'],
        'storage/ knows nothing of HTTP or use cases.',
      ),
    },
  },
  {
    files: ['services/api/src/usecases/**/*.ts'],
    rules: { 'no-restricted-imports': forbid(['routes', 'plugins'], 'usecases/ do not depend on HTTP.') },
  },
  // Use-case features import each other only downward: runtime -> evidence (through asserts.ts, the
  // snapshot's audit package and the provenance port) and notifications; evaluations -> evidence
  // (decisions); everything -> scope;
  // access stands apart.
  ...[
    ['scope', ['evidence', 'runtime', 'access', 'notifications', 'evaluations', 'insight']],
    ['evidence', ['runtime', 'access', 'notifications', 'evaluations', 'insight']],
    ['access', ['evidence', 'runtime', 'notifications', 'evaluations', 'insight']],
    ['notifications', ['evidence', 'runtime', 'access', 'evaluations', 'insight']],
    ['runtime', ['access', 'evidence', 'evaluations', 'insight']],
    ['evaluations', ['runtime', 'access', 'notifications', 'insight']],
    ['insight', ['access', 'evidence', 'runtime', 'notifications', 'evaluations']],
    ['retention', ['access', 'evidence', 'runtime', 'notifications', 'evaluations', 'insight']],
  ].map(([feature, below]) => ({
    files: [`services/api/src/usecases/${feature}/**/*.ts`],
    ignores:
      feature === 'runtime'
        ? [
            'services/api/src/usecases/runtime/asserts.ts',
            'services/api/src/usecases/runtime/snapshot-audit-package.ts',
          ]
        : [],
    rules: {
      'no-restricted-imports': forbid(
        ['routes', 'plugins', ...below],
        `usecases/${feature}/ does not import ${below.join(', ')} (see usecases/README.md).`,
      ),
    },
  })),
  {
    // Worker pools run tenant programs off the event loop: they know no use case, table or HTTP.
    files: ['services/api/src/workers/**/*.{ts,mjs}'],
    rules: {
      'no-restricted-imports': forbid(
        ['routes', 'plugins', 'usecases', 'storage', 'notify'],
        'workers/ take data and give data.',
      ),
    },
  },
  {
    // No import circle anywhere in the services.
    files: ['services/**/*.{ts,tsx}'],
    plugins: { 'import-x': importX },
    settings: {
      ...importX.flatConfigs.typescript.settings,
      'import-x/resolver': undefined,
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: 'tsconfig.json' })],
    },
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
  },
  {
    // Only storage/ builds SQL: everything above it calls repositories.
    files: ['services/api/src/**/*.ts'],
    ignores: ['services/api/src/storage/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { paths: [{ name: 'kysely', message: 'Only storage/ builds SQL.', allowTypeImports: true }] },
      ],
    },
  },
  {
    // Routes parse, call a use case and present: no repository, no SQL.
    files: ['services/api/src/routes/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'kysely', message: 'Only storage/ builds SQL.', allowTypeImports: true }],
          patterns: [{ group: ['**/storage/**'], message: 'Routes call use cases, not storage/.' }],
        },
      ],
    },
  },
  {
    files: ['services/reporter/**/*.ts', 'services/operator/**/*.ts'],
    rules: {
      'no-restricted-imports': forbid(['api'], 'The reporter and operator import only services/shared.'),
    },
  },
  {
    files: ['services/shared/**/*.ts'],
    rules: {
      'no-restricted-imports': forbid(
        ['api', 'reporter', 'operator'],
        'services/shared depends on no service.',
      ),
    },
  },
  {
    // The console is a browser client of /api/v2: it takes only types from the contract.
    files: ['services/console/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-imports': forbid(
        ['api', 'reporter', 'operator', 'client', 'agent'],
        'The console calls /api/v2.',
      ),
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/shared/contract/**'],
              allowTypeImports: true,
              message: 'Import only types from the contract: the bundle must not carry zod or server code.',
            },
          ],
        },
      ],
    },
  },
  {
    // Scripts that run before anything is compiled: plain JavaScript, no type information.
    files: ['services/console/scripts/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: { process: 'readonly', console: 'readonly' },
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
);

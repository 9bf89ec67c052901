// Lint with type information, plus the layer boundaries of ARCHITECTURE.md.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';

const ioPackages = [
  'fastify',
  'fastify-plugin',
  'kysely',
  'pg',
  'pino',
  '@electric-sql/pglite',
  'prom-client',
];

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'coverage/**', 'data/**', 'charts/**', 'eslint.config.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { 'import-x': importX },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // fastify plugins and handlers are async by contract, awaiting or not
      '@typescript-eslint/require-await': 'off',
      'no-eval': 'error',
      'no-new-func': 'error',
      'no-implied-eval': 'off',
      '@typescript-eslint/no-implied-eval': 'error',
      'import-x/no-duplicates': 'error',
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            // domain is pure: it imports no other layer of the API
            {
              target: './services/api/src/domain',
              from: [
                './services/api/src/plugins',
                './services/api/src/routes',
                './services/api/src/storage',
                './services/api/src/usecases',
              ],
              message: 'domain/ is pure: pass data in, get data out.',
            },
            // storage knows nothing of HTTP
            {
              target: './services/api/src/storage',
              from: [
                './services/api/src/plugins',
                './services/api/src/routes',
                './services/api/src/usecases',
              ],
              message: 'storage/ must not depend on HTTP or use-case layers.',
            },
            // use cases do not reach into HTTP
            {
              target: './services/api/src/usecases',
              from: ['./services/api/src/routes'],
              message: 'usecases/ must not depend on routes.',
            },
            // in-cluster programs speak only the shared contract and client
            {
              target: ['./services/reporter', './services/operator'],
              from: ['./services/api'],
              message: 'The reporter and operator import only services/shared.',
            },
            {
              target: './services/shared',
              from: ['./services/api', './services/reporter', './services/operator'],
              message: 'services/shared depends on no service.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['services/api/src/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: ioPackages.map((name) => ({ name, message: 'domain/ does no I/O.' })),
          patterns: ['node:*'],
        },
      ],
      'no-restricted-globals': ['error', { name: 'Date', message: 'domain/ takes `now` as an argument.' }],
      'no-restricted-properties': [
        'error',
        { object: 'Math', property: 'random', message: 'domain/ takes randomness as an argument.' },
      ],
    },
  },
  {
    files: ['services/api/src/routes/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { paths: [{ name: 'kysely', message: 'Only storage/ builds SQL.', allowTypeImports: true }] },
      ],
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

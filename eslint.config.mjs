// Lint: TypeScript rules plus Nx module boundaries. Apps never import apps; the domain imports
// nothing with I/O or a framework; each layer only reaches down.
import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

const FRAMEWORK_AND_IO = [
  '@nestjs/*',
  'typeorm',
  'pg',
  'kafkajs',
  'ioredis',
  '@opentelemetry/*',
  'express',
  'pino',
  'prom-client',
  'node:*',
  'fs',
  'child_process',
  'net',
  'http',
];

const CONSTRAINTS = {
  'type:domain': ['type:domain'],
  'type:contracts': ['type:domain'],
  'type:platform': ['type:platform'],
  'type:data-access': ['type:domain', 'type:contracts', 'type:data-access', 'type:platform'],
  'type:feature': ['type:domain', 'type:contracts', 'type:data-access', 'type:platform'],
  'type:util': ['type:util'],
  'type:testing': ['type:domain', 'type:contracts', 'type:data-access', 'type:platform', 'type:util', 'type:feature'],
  'type:app': ['type:domain', 'type:contracts', 'type:data-access', 'type:platform', 'type:feature', 'type:util'],
  'type:tool': ['type:domain', 'type:contracts', 'type:data-access', 'type:platform', 'type:feature', 'type:util', 'type:testing'],
  'type:e2e': ['type:domain', 'type:contracts', 'type:util', 'type:testing'],
};

/** Production code gets CONSTRAINTS; tests may also use the testing lib and utilities. */
function boundaries({ forTests }) {
  return [
    'error',
    {
      enforceBuildableLibDependency: false,
      allow: [],
      allowCircularSelfDependency: forTests,
      // Lib tests use @gantry/testing, which builds on those libs: a cycle through test files only.
      ignoredCircularDependencies: ['persistence', 'messaging', 'platform', 'contracts', 'domain'].map((lib) => [lib, 'testing']),
      depConstraints: Object.entries(CONSTRAINTS).map(([sourceTag, allowed]) => ({
        sourceTag,
        onlyDependOnLibsWithTags: forTests ? [...new Set([...allowed, 'type:testing', 'type:util'])] : allowed,
        ...(sourceTag === 'type:domain' && !forTests ? { bannedExternalImports: FRAMEWORK_AND_IO } : {}),
      })),
    },
  ];
}

const TEST_FILES = ['**/*.spec.ts', '**/*.int-spec.ts', '**/*.e2e-spec.ts', '**/test/**/*.ts'];

export default [
  { ignores: ['dist/**', 'node_modules/**', '.cache/**', 'coverage/**', '**/*.js', '**/*.mjs'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { '@nx': nx },
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-require-imports': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@nx/enforce-module-boundaries': boundaries({ forTests: false }),
    },
  },
  {
    files: TEST_FILES,
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@nx/enforce-module-boundaries': boundaries({ forTests: true }),
    },
  },
];

// Lint: TypeScript rules plus Nx module boundaries. Apps never import apps; the domain imports
// nothing with I/O or a framework; each layer only reaches down.
import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

const FRAMEWORK_AND_IO = ['@nestjs/*', 'typeorm', 'pg', 'kafkajs', 'ioredis', '@opentelemetry/*', 'express', 'pino', 'prom-client', 'node:*', 'fs', 'child_process', 'net', 'http'];

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
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          allow: [],
          depConstraints: [
            { sourceTag: 'type:domain', onlyDependOnLibsWithTags: ['type:domain'], bannedExternalImports: FRAMEWORK_AND_IO },
            { sourceTag: 'type:contracts', onlyDependOnLibsWithTags: ['type:domain'] },
            { sourceTag: 'type:platform', onlyDependOnLibsWithTags: ['type:platform'] },
            { sourceTag: 'type:data-access', onlyDependOnLibsWithTags: ['type:domain', 'type:contracts', 'type:data-access', 'type:platform'] },
            { sourceTag: 'type:feature', onlyDependOnLibsWithTags: ['type:domain', 'type:contracts', 'type:data-access', 'type:platform'] },
            { sourceTag: 'type:util', onlyDependOnLibsWithTags: ['type:util'] },
            { sourceTag: 'type:testing', onlyDependOnLibsWithTags: ['type:domain', 'type:contracts', 'type:data-access', 'type:platform', 'type:util', 'type:feature'] },
            { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:domain', 'type:contracts', 'type:data-access', 'type:platform', 'type:feature', 'type:util'] },
            { sourceTag: 'type:tool', onlyDependOnLibsWithTags: ['type:domain', 'type:contracts', 'type:data-access', 'type:platform', 'type:feature', 'type:util', 'type:testing'] },
            { sourceTag: 'type:e2e', onlyDependOnLibsWithTags: ['type:domain', 'type:contracts', 'type:util', 'type:testing'] },
          ],
        },
      ],
    },
  },
  {
    // Tests may read any lib of their project and the testing helpers.
    files: ['**/*.spec.ts', '**/*.int-spec.ts', '**/*.e2e-spec.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
];

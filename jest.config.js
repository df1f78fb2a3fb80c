// One Jest config, three projects: `unit` (pure logic, no I/O), `integration` (real Postgres,
// Redis, Kafka in-process) and `e2e` (real service processes). `npm test` runs all three.
const swc = [
  '@swc/jest',
  {
    swcrc: false,
    jsc: {
      target: 'es2022',
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
      keepClassNames: true,
    },
    module: { type: 'commonjs' },
  },
];
const moduleNameMapper = {
  '^@gantry/(domain|contracts|persistence|messaging|platform|telemetry|testing|runtime|stack|client)$': '<rootDir>/libs/$1/src/index.ts',
};
const base = { rootDir: __dirname, setupFiles: ['reflect-metadata'], transform: { '^.+\\.ts$': swc }, moduleNameMapper, testEnvironment: 'node' };

module.exports = {
  projects: [
    { ...base, displayName: 'unit', testMatch: ['<rootDir>/{apps,libs}/**/src/**/*.spec.ts', '<rootDir>/bench/**/*.spec.ts', '<rootDir>/tools/**/*.spec.ts'] },
    {
      ...base,
      displayName: 'integration',
      testMatch: ['<rootDir>/{apps,libs}/*/test/**/*.int-spec.ts'],
      globalSetup: '<rootDir>/libs/testing/src/jest/integration-setup.js',
    },
    {
      ...base,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'],
      globalSetup: '<rootDir>/libs/testing/src/jest/integration-setup.js',
    },
  ],
};

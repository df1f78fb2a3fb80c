export * from './tokens';
export * from './service-clients';
export * from './runtime.module';
export * from './readiness-registry';
export * from './consumers';

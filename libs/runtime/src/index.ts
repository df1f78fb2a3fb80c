export * from './tokens';
export * from './service-clients';
export * from './runtime.module';

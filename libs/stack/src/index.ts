export * from './wait-for';
export * from './service-process';
export * from './stack';
export * from './local-infra';
export * from './env-number';
export * from './fleet-stack';

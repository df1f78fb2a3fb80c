export * from './wait-for';
export * from './service-process';
export * from './stack';
export * from './local-infra';
export * from './env-number';
export * from './kafka-credentials';
export * from './stack-secrets';
export * from './fleet-stack';

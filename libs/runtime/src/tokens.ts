/** Injection tokens for the clients a service holds. */
export const REDIS = Symbol('REDIS');
export const KAFKA = Symbol('KAFKA');
export const KAFKA_PRODUCER = Symbol('KAFKA_PRODUCER');
export const SERVICE_LOGGER = Symbol('SERVICE_LOGGER');
/** The CommandSigner of a service that sends agent commands. */
export const COMMAND_SIGNER = Symbol('COMMAND_SIGNER');
/** The service's validated config. */
export const CONFIG = Symbol('CONFIG');
/** The service's WakeUpSender: tells the scheduler, after a commit, that it may place more. */
export const SCHEDULER_WAKE = Symbol('SCHEDULER_WAKE');

/**
 * Timeouts for every Kafka call (contract §4.3: every database, Redis and Kafka call has one), to be
 * passed to `new Kafka({...})` in kafka-client.ts, spread into its config. kafkajs's own defaults
 * are a 1 s connection timeout and a 30 s request timeout; these are stated so that none is left
 * implicit and a broker that stops answering is noticed within seconds, not half a minute:
 * - connectionTimeout: TCP connect (and TLS handshake) to a broker;
 * - authenticationTimeout: the SASL exchange after it (contract §4.1);
 * - requestTimeout: any request's answer (produce, fetch, metadata, offsets). Above the consumers'
 *   maxWaitTimeInMs (a fetch may legitimately wait that long for data) and the producer's ack wait;
 * - enforceRequestTimeout: kafkajs applies requestTimeout only when this is true.
 * The gateway never calls Kafka on a request's path (creates go through the outbox), so these bound
 * the relay and the consumers, not a client's wait.
 */
export const KAFKA_TIMEOUTS = {
  connectionTimeout: 3_000,
  authenticationTimeout: 10_000,
  requestTimeout: 15_000,
  enforceRequestTimeout: true,
} as const;

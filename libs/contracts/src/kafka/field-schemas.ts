import { Static, TSchema, Type } from '@sinclair/typebox';

/*
 * The fields every Kafka message is built from. Each message is one TypeBox schema (JSON Schema
 * with its TypeScript type), from which its type, its validator and its published JSON Schema come
 * (ADR 0013). What all of them share is decided here once:
 * - no string holds the NUL character (Postgres refuses it in text, and a message it refuses would
 *   stall its partition);
 * - unknown fields are ignored (contract section 3): every object allows them. Nothing reads them;
 *   an object that is stored or shown whole (a heartbeat's telemetry and running set) is a
 *   `StoredObject`, whose unknown fields the parser drops, so a sender cannot make Redis keep them.
 */

/** A string without the NUL character, as a JSON Schema pattern. */
export const NO_NUL = '^[^\\u0000]*$';

export const NODE_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$/;

/** Job ids are UUIDs; anything else names no job. */
export const JOB_ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Text of at most `maxLength` characters (at least `minLength`), never a NUL. */
export const Text = (opts: { minLength?: number; maxLength?: number; description?: string } = {}) => Type.String({ ...opts, pattern: NO_NUL });

/** A node id (contract: the message key); the pattern has no room for a NUL. */
export const NodeId = () => Type.String({ pattern: NODE_ID_PATTERN.source, description: 'the node id, also the message key' });

/** A job id as the messages carry it (reports and commands keep any such id; a non-UUID names no job). */
export const JobId = () => Text({ minLength: 1, maxLength: 64 });

/** A whole number from `minimum`, at most the largest integer a double holds exactly. */
export const Int = (minimum: number, maximum = Number.MAX_SAFE_INTEGER, description?: string) =>
  Type.Integer({ minimum, maximum, ...(description ? { description } : {}) });

/** Epoch milliseconds. */
export const EpochMs = () => Int(0, Number.MAX_SAFE_INTEGER, 'epoch milliseconds');

/** One of `values` (a JSON Schema enum: a failure lists them). */
export const OneOf = <const V extends readonly string[]>(values: V, description?: string) =>
  Type.Unsafe<V[number]>({ type: 'string', enum: [...values], ...(description ? { description } : {}) });

/** A share, 0..1. */
export const Unit = () => Type.Number({ minimum: 0, maximum: 1 });

/** An object of the given fields whose unknown fields are allowed and ignored (left in place: consumers read fields by name). */
export const OpenObject = <P extends Parameters<typeof Type.Object>[0]>(properties: P, options: { description?: string; [k: string]: unknown } = {}) =>
  Type.Object(properties, { ...options, additionalProperties: true });

/** Marks a schema whose unknown fields the parser removes (invisible in the published JSON Schema). */
export const DROPS_UNKNOWN = Symbol('gantry.dropsUnknownFields');

/**
 * An object that is stored or shown whole downstream: its unknown fields are allowed (the published
 * schema is the same as an OpenObject's) and the parser removes them.
 */
export const StoredObject = <P extends Parameters<typeof Type.Object>[0]>(properties: P, options: { description?: string; [k: string]: unknown } = {}) =>
  Object.assign(OpenObject(properties, options), { [DROPS_UNKNOWN]: true });

/** `schema` or null, as one JSON Schema type list (so a failure names one rule, not a union's). */
export const OrNull = <T extends TSchema>(schema: T) => Type.Unsafe<Static<T> | null>({ ...schema, type: [schema.type as string, 'null'] });

/** A flat object of strings (environment variables): keys and values without NUL, every entry kept. */
export const StringMap = () =>
  Type.Unsafe<Record<string, string>>({ type: 'object', propertyNames: { pattern: NO_NUL }, additionalProperties: { type: 'string', pattern: NO_NUL } });

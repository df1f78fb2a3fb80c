import { isTransientFailure } from './failure-kind';

const err = (props: Record<string, unknown>) => Object.assign(new Error(String(props.message ?? 'x')), props);

describe('isTransientFailure', () => {
  it.each([
    ['postgres connection refused', err({ code: 'ECONNREFUSED' }), true],
    ['postgres admin shutdown', err({ code: '57P01' }), true],
    ['postgres cannot connect now', err({ code: '57P03' }), true],
    ['statement timeout', err({ code: '57014' }), true],
    ['deadlock', err({ code: '40P01' }), true],
    ['serialization failure', err({ code: '40001' }), true],
    ['too many connections', err({ code: '53300' }), true],
    ['typeorm-wrapped connection failure', err({ driverError: { code: '08006' } }), true],
    ['pool acquire timeout', err({ message: 'timeout exceeded when trying to connect' }), true],
    ['redis retries exhausted', err({ name: 'MaxRetriesPerRequestError', message: 'Reached the max retries per request limit' }), true],
    ['kafka retriable', err({ name: 'KafkaJSProtocolError', retriable: true }), true],
    ['kafka connection', err({ name: 'KafkaJSConnectionError' }), true],
    ['invalid text (NUL byte)', err({ code: '22021' }), false],
    ['check violation', err({ code: '23514' }), false],
    ['a bug', new TypeError("Cannot read properties of undefined (reading 'x')"), false],
    [
      'kafka message too large',
      err({
        name: 'KafkaJSProtocolError',
        retriable: false,
        message: 'The request included a message larger than the max message size the server will accept',
      }),
      false,
    ],
    [
      'kafka unknown topic, after kafkajs retries',
      err({ name: 'KafkaJSNumberOfRetriesExceeded', cause: err({ name: 'KafkaJSProtocolError', retriable: true, type: 'UNKNOWN_TOPIC_OR_PARTITION' }) }),
      false,
    ],
    [
      'kafka leader moving, after kafkajs retries',
      err({ name: 'KafkaJSNumberOfRetriesExceeded', cause: err({ name: 'KafkaJSProtocolError', retriable: true, type: 'NOT_LEADER_FOR_PARTITION' }) }),
      true,
    ],
    ['kafka not authorized for the topic', err({ name: 'KafkaJSProtocolError', retriable: false, type: 'TOPIC_AUTHORIZATION_FAILED' }), false],
    ['not an error', 'boom', false],
  ])('%s', (_name, e, transient) => {
    expect(isTransientFailure(e)).toBe(transient);
  });
});

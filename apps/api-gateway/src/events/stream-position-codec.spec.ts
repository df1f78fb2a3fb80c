import { decodeSeq, decodeStreamPosition, encodeStreamPosition } from './stream-position-codec';

describe('stream positions', () => {
  const p = { xid: '18446744073709551615', jobId: '0b7c8f4e-3a8d-4c2e-9f1a-2b3c4d5e6f70', seq: 2147483647 };

  it('round-trips', () => expect(decodeStreamPosition(encodeStreamPosition(p), 'after')).toEqual(p));

  it.each([
    '',
    'x',
    '1.2.3',
    '18446744073709551616.0b7c8f4e-3a8d-4c2e-9f1a-2b3c4d5e6f70.1', // past xid8
    '1.0b7c8f4e-3a8d-4c2e-9f1a-2b3c4d5e6f70.2147483648', // past int
    '1.0B7C8F4E-3A8D-4C2E-9F1A-2B3C4D5E6F70.1', // uuids are issued lowercase
    '1.0b7c8f4e-3a8d-4c2e-9f1a-2b3c4d5e6f70.1 ',
    '-1.0b7c8f4e-3a8d-4c2e-9f1a-2b3c4d5e6f70.1',
  ])('rejects %j with a 400', (raw) => expect(() => decodeStreamPosition(raw, 'Last-Event-ID')).toThrow(expect.objectContaining({ status: 400 })));

  it.each(['0', '7', '2147483647'])('reads seq %s', (raw) => expect(decodeSeq(raw, 'Last-Event-ID')).toBe(Number(raw)));
  it.each(['', '-1', '1.5', 'abc', '2147483648'])('rejects seq %j', (raw) =>
    expect(() => decodeSeq(raw, 'Last-Event-ID')).toThrow(expect.objectContaining({ status: 400 })),
  );
});

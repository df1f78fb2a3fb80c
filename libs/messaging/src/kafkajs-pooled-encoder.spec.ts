import fc from 'fast-check';

type Load = <T>(path: string) => T;
const MODULES = [
  'kafkajs/src/protocol/encoder',
  'kafkajs/src/protocol/recordBatch/v0',
  'kafkajs/src/protocol/recordBatch/record/v0',
  './kafkajs-pooled-encoder',
];

/** kafkajs's protocol modules in a registry of their own (loaded inside it): as shipped, or with the pooled encoder's patch. */
function kafkajsProtocol(patched: boolean): Load {
  const loaded = new Map<string, unknown>();
  jest.isolateModules(() => {
    for (const m of patched ? MODULES : MODULES.slice(0, -1)) loaded.set(m, require(m));
  });
  return <T>(path: string) => {
    if (!loaded.has(path)) throw new Error(`${path} not loaded`);
    return loaded.get(path) as T;
  };
}

interface Encoder {
  buf: Buffer;
  offset: number;
  buffer: Buffer;
  writeVarInt(v: number): Encoder;
  writeUVarInt(v: number): Encoder;
  writeInt32(v: number): Encoder;
  writeVarIntBytes(b: Buffer | null): Encoder;
  writeVarIntString(s: string | null): Encoder;
  writeString(s: string): Encoder;
}
interface Message {
  key: string;
  value: Buffer;
  headers: Record<string, string>;
}

async function produceRequest(load: Load, messages: Message[]): Promise<Buffer> {
  const { RecordBatch } = load<{ RecordBatch: (o: object) => Promise<Encoder> }>('kafkajs/src/protocol/recordBatch/v0');
  const Record = load<(o: object) => Encoder>('kafkajs/src/protocol/recordBatch/record/v0');
  const records = messages.map((m, i) => Record({ offsetDelta: i, timestampDelta: 0, key: Buffer.from(m.key), value: m.value, headers: m.headers }));
  const batch = await RecordBatch({ compression: 0, firstOffset: '0', firstTimestamp: 1_764_800_000_000, maxTimestamp: 1_764_800_000_000, records });
  return batch.buffer;
}

function primitives(load: Load, ints: number[], strings: string[]): Buffer {
  const Encoder = load<new () => Encoder>('kafkajs/src/protocol/encoder');
  const e = new Encoder();
  for (const i of ints)
    e.writeVarInt(i)
      .writeUVarInt(i >>> 0)
      .writeInt32(i | 0);
  for (const s of strings) e.writeVarIntString(s).writeString(s).writeVarIntBytes(Buffer.from(s));
  e.writeVarIntString(null).writeVarIntBytes(null);
  return e.buffer;
}

describe('kafkajs pooled encoder', () => {
  const shipped = kafkajsProtocol(false);
  const pooled = kafkajsProtocol(true);

  it('is in effect once loaded: encoders take pool memory', () => {
    const { pooledEncoderInstalled } = pooled<{ pooledEncoderInstalled: () => boolean }>('./kafkajs-pooled-encoder');
    expect(pooledEncoderInstalled()).toBe(true);
    const Shipped = shipped<new () => Encoder>('kafkajs/src/protocol/encoder');
    expect(new Shipped().buf.buffer.byteLength).toBe(512); // kafkajs's own: an ArrayBuffer per encoder
  });

  it('writes the same bytes as kafkajs for record batches of every size', async () => {
    const message = fc.record({
      key: fc.string({ maxLength: 40 }),
      value: fc.uint8Array({ maxLength: 6000 }).map((a) => Buffer.from(a)),
      headers: fc.dictionary(fc.string({ minLength: 1, maxLength: 20 }), fc.string({ maxLength: 100 }), { maxKeys: 3 }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(message, { minLength: 1, maxLength: 30 }), async (messages) => {
        expect((await produceRequest(pooled, messages)).equals(await produceRequest(shipped, messages))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('writes the same varints, integers and strings as kafkajs', () => {
    const edges = [0, 1, 63, 64, 127, 128, 255, 16_383, 16_384, 2 ** 21, 2 ** 28, 2 ** 31 - 1, -1, -64, -65, -(2 ** 31)];
    expect(primitives(pooled, edges, ['', 'a', 'é€😀']).equals(primitives(shipped, edges, ['', 'a', 'é€😀']))).toBe(true);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })), fc.array(fc.string({ maxLength: 700 }), { maxLength: 8 }), (ints, strings) => {
        expect(primitives(pooled, ints, strings).equals(primitives(shipped, ints, strings))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

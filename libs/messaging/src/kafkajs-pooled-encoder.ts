/**
 * kafkajs 2.2.4 (its last release) gives every encoder a fresh zero-filled 512-byte buffer
 * (Buffer.alloc: a new ArrayBuffer each time), grows it the same way, and writes every varint
 * through a throwaway array and Buffer. A produced record takes four encoders (the record, its body,
 * each header) and about eight varints, so a simulated fleet spent much of its CPU allocating those
 * buffers and collecting them (ADR 0010, bench:heartbeats). This patch makes the encoder take its
 * buffers from Node's pool (Buffer.allocUnsafe: safe here, an encoder writes every byte in order and
 * exposes only buf[0, offset)) and write varints in place. Same bytes on the wire: the spec
 * compares them.
 *
 * It patches the class kafkajs already uses, in place: replacing the module's export does not work
 * under OpenTelemetry, whose require hook hands every later require the exports it saw first. The
 * constructor cannot be changed, but it sizes its buffer with the static nextPowerOfTwo, which the
 * encoder uses nowhere else: that now answers 0, so a new encoder starts empty (no ArrayBuffer of
 * its own) and takes its first buffer, at least INITIAL_BYTES, from the pool on its first write.
 */
const ENCODER_MODULE = 'kafkajs/src/protocol/encoder';
const PATCHED = Symbol.for('gantry.kafkajs.pooledEncoder');
/** kafkajs's own first size (511 rounded up). */
const INITIAL_BYTES = 512;

interface Encoder {
  buf: Buffer;
  offset: number;
  ensureAvailable(length: number): void;
  writeUVarInt(value: number): Encoder;
}
interface EncoderClass {
  nextPowerOfTwo(value: number): number;
  prototype: Encoder;
  [PATCHED]?: true;
}

/** The smallest power of two at least `n` (n >= 1). */
const powerOfTwoAtLeast = (n: number) => 2 ** Math.ceil(Math.log2(n));

const encoder = require(ENCODER_MODULE) as EncoderClass;
if (!encoder[PATCHED]) {
  encoder[PATCHED] = true;
  encoder.nextPowerOfTwo = () => 0;
  encoder.prototype.ensureAvailable = function ensureAvailable(this: Encoder, length: number): void {
    if (this.offset + length <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(powerOfTwoAtLeast(Math.max(INITIAL_BYTES, this.offset + length)));
    this.buf.copy(grown, 0, 0, this.offset);
    this.buf = grown;
  };
  /** LEB128 as kafkajs writes it (at most 5 bytes for a 32-bit value), without the temporary array and Buffer. */
  encoder.prototype.writeUVarInt = function writeUVarInt(this: Encoder, value: number): Encoder {
    this.ensureAvailable(5);
    while ((value & 0xffffff80) !== 0) {
      this.buf[this.offset++] = (value & 0x7f) | 0x80;
      value >>>= 7;
    }
    this.buf[this.offset++] = value & 0x7f;
    return this;
  };
}

/** Whether kafkajs's encoder (the class every kafkajs module shares) takes its buffers from the pool. */
export function pooledEncoderInstalled(): boolean {
  const e = new (encoder as unknown as new () => Encoder)().writeUVarInt(1);
  return e.buf.buffer.byteLength === Buffer.poolSize && Buffer.from(e.buf.subarray(0, e.offset)).equals(Buffer.from([1]));
}

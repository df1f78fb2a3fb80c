/**
 * bench:signatures: what proving who sent a message costs, per message, in-process (ADR 0015):
 * an agent signing a beat (HMAC-SHA256 over its bytes), the ingester verifying it (the header
 * checks, the key lookup, the HMAC and the compare), and the control plane signing a RUN and an
 * agent verifying it (Ed25519). Beats are the 10,000/s path; commands are ~500/s plus repeats.
 * Prints microseconds per operation (median of 5 rounds of 20,000 after a warm-up).
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import {
  CommandSigner,
  NODE_ID_HEADER,
  SIGNATURE_HEADER,
  commandPublicKeys,
  commandSignatureValid,
  nodeSignatureMatches,
  nodeSigningKey,
  signNodeMessage,
} from '@gantry/messaging';

const fullBeat = (i: number) =>
  JSON.stringify({
    nodeId: `bench-${String(i).padStart(5, '0')}`,
    bootId: randomBytes(16).toString('hex'),
    seq: 1234,
    sentAt: Date.now(),
    zone: 'zone-a',
    rack: 'bench-r0001',
    gpus: Array.from({ length: 8 }, (_, index) => ({ index, model: 'H100', memoryMiB: 81920, memoryUsedMiB: 40000, utilization: 0.73, healthy: true })),
    cpu: { cores: 96, utilization: 0.41 },
    memory: { totalMiB: 1048576, usedMiB: 300000 },
    running: [{ jobId: '0b7e3f0a-58d4-4c1e-9a55-3f5a3c1d2e4f', attempt: 1 }],
  });
const livenessBeat = (i: number) =>
  JSON.stringify({
    nodeId: `bench-${String(i).padStart(5, '0')}`,
    bootId: randomBytes(16).toString('hex'),
    seq: 1235,
    sentAt: Date.now(),
    zone: 'zone-a',
    rack: 'bench-r0001',
    running: [],
  });
const run = JSON.stringify({
  type: 'RUN',
  nodeId: 'bench-00042',
  jobId: '0b7e3f0a-58d4-4c1e-9a55-3f5a3c1d2e4f',
  attempt: 1,
  issuedAt: Date.now(),
  image: 'registry/pytorch:24.05',
  command: ['python', 'train.py', '--epochs', '3'],
  env: { EPOCHS: '3', SIM_DURATION_MS: '1000' },
  resources: { gpus: 8, gpuModel: 'H100', cpuCores: 32, memoryMiB: 262144 },
  gang: { size: 1, rank: 0, nodeIds: ['bench-00042'] },
});

function timeUs(n: number, fn: (i: number) => unknown): number {
  for (let i = 0; i < 5_000; i++) fn(i);
  const rounds: number[] = [];
  for (let r = 0; r < 5; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) fn(i);
    rounds.push(Number(process.hrtime.bigint() - t0) / 1000 / n);
  }
  return rounds.sort((a, b) => a - b)[2];
}

function main(): void {
  const N = 20_000;
  const keys = Array.from({ length: 1000 }, (_, i) => nodeSigningKey(`credential-${i}-${randomBytes(8).toString('hex')}`));
  const directory = new Map(keys.map((k, i) => [`bench-${String(i).padStart(5, '0')}`, k]));
  const results: Record<string, number> = {};
  for (const [name, make] of [
    ['full-telemetry beat', fullBeat],
    ['liveness beat', livenessBeat],
  ] as const) {
    const values = Array.from({ length: 1000 }, (_, i) => Buffer.from(make(i)));
    const headers = values.map((v, i) => ({ [NODE_ID_HEADER]: `bench-${String(i).padStart(5, '0')}`, [SIGNATURE_HEADER]: signNodeMessage(v, keys[i]) }));
    results[`${name} (${values[0].length} B): sign`] = timeUs(N, (i) => signNodeMessage(values[i % 1000], keys[i % 1000]));
    results[`${name}: verify`] = timeUs(N, (i) => {
      const h = headers[i % 1000];
      const key = directory.get(h[NODE_ID_HEADER]);
      return key && nodeSignatureMatches(values[i % 1000], h[SIGNATURE_HEADER], key);
    });
  }
  const signer = new CommandSigner(generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
  const publicKeys = commandPublicKeys(signer.publicKeyPem);
  const value = Buffer.from(run);
  const signature = signer.sign(value);
  results[`RUN command (${value.length} B): sign`] = timeUs(N / 4, () => signer.sign(value));
  results['RUN command: verify'] = timeUs(N / 4, () => commandSignatureValid(value, signature, publicKeys));
  console.log(
    JSON.stringify(
      { node: process.version, usPerOperation: Object.fromEntries(Object.entries(results).map(([k, v]) => [k, Math.round(v * 100) / 100])) },
      null,
      2,
    ),
  );
}

main();

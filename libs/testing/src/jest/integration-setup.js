// Runs once before the integration and e2e projects: fails fast, naming what is missing,
// instead of letting every test time out against infrastructure that is not there.
const net = require('node:net');

function reachable(host, port) {
  return new Promise((resolve) => {
    const s = net.connect({ host, port: Number(port) });
    s.setTimeout(2000);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
    s.once('timeout', () => {
      s.destroy();
      resolve(false);
    });
  });
}

module.exports = async () => {
  const off = Number(process.env.GANTRY_TEST_PORT_OFFSET || 0);
  const redis = new URL(process.env.REDIS_URL || `redis://127.0.0.1:${26379 + off}/1`);
  const [kHost, kPort] = (process.env.KAFKA_BROKERS || `127.0.0.1:${29092 + off}`).split(',')[0].split(':');
  const db = new URL(process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/gantry_test');
  const checks = [
    ['Postgres', db.hostname, db.port || 5432],
    ['Redis', redis.hostname, redis.port || 6379],
    ['Kafka', kHost, kPort],
  ];
  for (const [name, host, port] of checks) {
    if (!(await reachable(host, port))) {
      throw new Error(`${name} is not reachable at ${host}:${port}. Run the suite with \`npm test\`, which starts what it needs.`);
    }
  }
};

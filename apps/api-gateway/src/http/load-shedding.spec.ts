import Fastify from 'fastify';
import { measureEventLoopPressure } from './load-shedding';

/** Busy-waits: what a gateway whose event loop cannot keep up looks like from inside. */
function block(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // spin
  }
}

const turn = () => new Promise((r) => setTimeout(r, 20));

describe('measureEventLoopPressure', () => {
  it('says so while the event loop runs late, and not once it keeps up again', async () => {
    const fastify = Fastify();
    const pressured = await measureEventLoopPressure(fastify, 50, 20);
    await fastify.ready();
    try {
      expect(pressured()).toBe(false);
      block(400);
      let seen = false;
      for (let i = 0; i < 20 && !seen; i++) {
        await turn();
        seen = pressured();
      }
      expect(seen).toBe(true);
      let cleared = false;
      for (let i = 0; i < 100 && !cleared; i++) {
        await turn();
        cleared = !pressured();
      }
      expect(cleared).toBe(true);
    } finally {
      await fastify.close();
    }
  });

  it('never says so when turned off (0)', async () => {
    const fastify = Fastify();
    const pressured = await measureEventLoopPressure(fastify, 0, 20);
    block(200);
    await turn();
    expect(pressured()).toBe(false);
    await fastify.close();
  });
});

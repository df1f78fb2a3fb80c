import { PARAMS_PROVIDER_TOKEN, Params } from 'nestjs-pino';
import { loggerModule } from './bootstrap-service';

const paramsOf = (level: string): Params =>
  (loggerModule('svc', level).providers as Array<{ provide?: unknown; useValue?: Params }>).find((p) => p.provide === PARAMS_PROVIDER_TOKEN)!.useValue!;

describe('loggerModule', () => {
  it.each<[string, boolean]>([
    ['trace', true],
    ['debug', true],
    ['info', false],
    ['warn', false],
    ['error', false],
    ['fatal', false],
    ['silent', false],
  ])('at %s, the per-request logger middleware is installed: %s', (level, installed) => {
    const params = paramsOf(level);
    // nestjs-pino applies its middleware to every route unless forRoutes says otherwise.
    expect(params.forRoutes).toEqual(installed ? undefined : []);
    expect(params.pinoHttp).toMatchObject({ name: 'svc', level });
  });

  it('never logs the bearer token', () => {
    expect(paramsOf('debug').pinoHttp).toMatchObject({ redact: { paths: ['req.headers.authorization'] } });
  });
});

import './instrumentation';
import { SwaggerModule } from '@nestjs/swagger';
import { CreateJobDto } from '@gantry/contracts';
import { bootstrapService, exitOnBootFailure, loadConfig } from '@gantry/platform';
import { GATEWAY_CONTROLLERS, GatewayModule } from './app.module';
import { RequestGate } from './auth/request-gate';
import { GatewayEnv } from './config';
import { measureEventLoopPressure } from './http/load-shedding';
import { translateUnavailable } from './http/unavailable-errors';
import { serveConsole } from './console/console-site';
import { parseCreateJob } from './jobs/create-job-parser';
import { buildOpenApiDocument } from './openapi/openapi-document';

async function bootstrap(): Promise<void> {
  const config = loadConfig(GatewayEnv);
  await bootstrapService(GatewayModule.forConfig(config), config, {
    fastValidators: new Map([[CreateJobDto, parseCreateJob]]),
    translateError: translateUnavailable(config.GANTRY_ADMISSION_WAIT_MS),
    configure: async (app) => {
      const fastify = app.getHttpAdapter().getInstance();
      fastify.decorateRequest('principal', null);
      const gate = app.get(RequestGate);
      fastify.addHook('onRequest', gate.onRequest);
      gate.shedCreatesWhen(await measureEventLoopPressure(fastify, config.GANTRY_SHED_EVENT_LOOP_DELAY_MS, config.GANTRY_SHED_SAMPLE_MS));
      SwaggerModule.setup('docs', app, buildOpenApiDocument(app, GATEWAY_CONTROLLERS), { jsonDocumentUrl: 'openapi.json' });
      await serveConsole(app);
    },
  });
}

bootstrap().catch(exitOnBootFailure);

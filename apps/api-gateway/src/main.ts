import './instrumentation';
import { SwaggerModule } from '@nestjs/swagger';
import { CreateJobDto } from '@gantry/contracts';
import { bootstrapService, exitOnBootFailure, loadConfig } from '@gantry/platform';
import { GATEWAY_CONTROLLERS, GatewayModule } from './app.module';
import { RequestGate } from './auth/request-gate';
import { GatewayEnv } from './config';
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
      fastify.addHook('onRequest', app.get(RequestGate).onRequest);
      SwaggerModule.setup('docs', app, buildOpenApiDocument(app, GATEWAY_CONTROLLERS), { jsonDocumentUrl: 'openapi.json' });
      await serveConsole(app);
    },
  });
}

bootstrap().catch(exitOnBootFailure);

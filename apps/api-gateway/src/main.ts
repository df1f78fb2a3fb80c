import './instrumentation';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { CreateJobDto } from '@gantry/contracts';
import { bootstrapService, exitOnBootFailure, loadConfig } from '@gantry/platform';
import { GatewayModule } from './app.module';
import { RequestGate } from './auth/request-gate';
import { GatewayEnv } from './config';
import { translateUnavailable } from './http/unavailable-errors';
import { parseCreateJob } from './jobs/create-job-parser';

async function bootstrap(): Promise<void> {
  const config = loadConfig(GatewayEnv);
  await bootstrapService(GatewayModule.forConfig(config), config, {
    fastValidators: new Map([[CreateJobDto, parseCreateJob]]),
    translateError: translateUnavailable(config.GANTRY_ADMISSION_WAIT_MS),
    configure: (app) => {
      const fastify = app.getHttpAdapter().getInstance();
      fastify.decorateRequest('principal', null);
      fastify.addHook('onRequest', app.get(RequestGate).onRequest);
      const doc = SwaggerModule.createDocument(
        app,
        new DocumentBuilder().setTitle('Gantry API').setVersion('v1').addBearerAuth().build(),
      );
      SwaggerModule.setup('docs', app, doc, { jsonDocumentUrl: 'openapi.json' });
    },
  });
}

bootstrap().catch(exitOnBootFailure);

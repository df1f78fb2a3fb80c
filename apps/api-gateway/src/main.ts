import './instrumentation';
import { json } from 'express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { bodyParserErrors, bootstrapService, exitOnBootFailure, loadConfig } from '@gantry/platform';
import { GatewayModule } from './app.module';
import { GatewayEnv } from './config';

async function bootstrap(): Promise<void> {
  const config = loadConfig(GatewayEnv);
  await bootstrapService(GatewayModule.forConfig(config), config, {
    configure: (app) => {
      app.use(json({ limit: '1mb', type: ['application/json', 'application/*+json'] }), bodyParserErrors);
      const doc = SwaggerModule.createDocument(
        app,
        new DocumentBuilder().setTitle('Gantry API').setVersion('v1').addBearerAuth().build(),
      );
      SwaggerModule.setup('docs', app, doc, { jsonDocumentUrl: 'openapi.json' });
    },
  });
}

bootstrap().catch(exitOnBootFailure);

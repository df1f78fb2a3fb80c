import './instrumentation';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { CreateJobDto } from '@gantry/contracts';
import { bootstrapService, exitOnBootFailure, loadConfig } from '@gantry/platform';
import { GatewayModule } from './app.module';
import { GatewayEnv } from './config';
import { parseCreateJob } from './jobs/create-job-parser';

async function bootstrap(): Promise<void> {
  const config = loadConfig(GatewayEnv);
  await bootstrapService(GatewayModule.forConfig(config), config, {
    fastValidators: new Map([[CreateJobDto, parseCreateJob]]),
    configure: (app) => {
      const doc = SwaggerModule.createDocument(
        app,
        new DocumentBuilder().setTitle('Gantry API').setVersion('v1').addBearerAuth().build(),
      );
      SwaggerModule.setup('docs', app, doc, { jsonDocumentUrl: 'openapi.json' });
    },
  });
}

bootstrap().catch(exitOnBootFailure);

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KAFKA_MESSAGE_SCHEMAS, kafkaMessageSchemaDocument } from '@gantry/contracts';

/**
 * `npm run schemas:kafka`: writes the JSON Schema of every topic's messages to
 * libs/contracts/schemas/, where agents written by others find them. A unit test
 * (kafka-message-schemas.spec.ts) fails when the files and the definitions differ.
 */
const dir = join(__dirname, '..', '..', '..', 'libs', 'contracts', 'schemas');
mkdirSync(dir, { recursive: true });
for (const topic of Object.keys(KAFKA_MESSAGE_SCHEMAS)) {
  writeFileSync(join(dir, `${topic}.schema.json`), kafkaMessageSchemaDocument(topic));
  console.log(`wrote libs/contracts/schemas/${topic}.schema.json`);
}

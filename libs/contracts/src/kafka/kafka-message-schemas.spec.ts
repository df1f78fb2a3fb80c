import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { KAFKA_MESSAGE_SCHEMAS, kafkaMessageSchemaDocument } from './kafka-message-schemas';

describe('the published message schemas (libs/contracts/schemas)', () => {
  it.each(Object.keys(KAFKA_MESSAGE_SCHEMAS))('%s is the schema the consumers validate with (npm run schemas:kafka rewrites it)', (topic) => {
    const file = join(__dirname, '..', '..', 'schemas', `${topic}.schema.json`);
    expect(readFileSync(file, 'utf8')).toBe(kafkaMessageSchemaDocument(topic));
  });
});

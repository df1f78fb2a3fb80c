import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `nodes.logs_port`: the port on `nodes.address` where the node's agent serves its attempts' logs
 * (heartbeats' `logsPort`, ADR 0021), written with the rest of the topology. Null until the node says.
 */
export class AddNodeLogsPort1796211528395 implements MigrationInterface {
  name = 'AddNodeLogsPort1796211528395';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE nodes ADD COLUMN logs_port int NULL CHECK (logs_port BETWEEN 1 AND 65535)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE nodes DROP COLUMN logs_port`);
  }
}

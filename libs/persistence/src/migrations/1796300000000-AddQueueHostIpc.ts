import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `queues.host_ipc` (contract 5.1, ADR 0033): whether the queue's attempts share the node's IPC
 * namespace and `/dev/shm` (work that needs the host's IPC); false, the default, gives every
 * attempt its own. Read when a RUN is built, so a change applies to the next attempt.
 */
export class AddQueueHostIpc1796300000000 implements MigrationInterface {
  name = 'AddQueueHostIpc1796300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE queues ADD COLUMN host_ipc boolean NOT NULL DEFAULT false`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE queues DROP COLUMN host_ipc`);
  }
}

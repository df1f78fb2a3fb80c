import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Sql, appendAuditEntry, autocommit } from '@gantry/persistence';
import { Principal } from '../auth/principal';

/**
 * Records operators' changes (contract §4.3): who (owner, role, token id), what (`action`, named
 * like the operation: `tokens.create`, `queues.delete`, `nodes.cordon`, `jobs.cancel`, ...), to
 * what (`target`), when, and from which address. One call from any controller or service:
 * `await this.audit.record(who, 'nodes.enroll', nodeId)`. Pass the transaction's `sql` to record
 * the entry with the change itself; without it the entry is written right after the change.
 */
@Injectable()
export class AuditLog {
  constructor(@Inject(DataSource) private readonly ds: DataSource) {}

  async record(who: Principal, action: string, target: string, details: Record<string, unknown> = {}, sql: Sql = autocommit(this.ds)): Promise<void> {
    await appendAuditEntry(sql, {
      at: new Date(),
      actor: { owner: who.owner, role: who.role, tokenId: who.tokenId },
      address: who.address,
      action,
      target,
      details,
    });
  }
}

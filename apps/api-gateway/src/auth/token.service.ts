import { Inject, Injectable } from '@nestjs/common';
import { randomBytes, randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ApiTokenRecord, autocommit, insertApiToken, listApiTokensPage, revokeApiToken } from '@gantry/persistence';
import { ApiError, ErrorCode } from '@gantry/platform';
import { AuditLog } from '../audit/audit-log';
import { Principal, Role } from './principal';
import { TokenRegistry, sha256 } from './token-registry';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Minting, listing and revoking tokens; authentication is TokenRegistry's. */
@Injectable()
export class TokenService {
  constructor(
    @Inject(DataSource) private readonly ds: DataSource,
    private readonly registry: TokenRegistry,
    private readonly audit: AuditLog,
  ) {}

  /** Mints a token; the secret is returned once and only its hash is stored. */
  async mint(
    who: Principal,
    t: { owner: string; role: Role; description: string | null; expiresAt: Date | null },
  ): Promise<ApiTokenRecord & { token: string }> {
    const token = `gnt_${randomBytes(32).toString('base64url')}`;
    const record = { id: randomUUID(), ...t, createdAt: new Date() };
    await insertApiToken(autocommit(this.ds), { ...record, secretSha256: sha256(token) });
    this.registry.learn({ ...record, revokedAt: null, secretSha256: sha256(token) });
    await this.audit.record(who, 'tokens.create', record.id, { owner: t.owner, role: t.role, expiresAt: t.expiresAt?.toISOString() ?? null });
    return { ...record, revokedAt: null, token };
  }

  async list(after: { createdAt: Date; id: string } | null, limit: number): Promise<ApiTokenRecord[]> {
    return listApiTokensPage(autocommit(this.ds), after, limit);
  }

  /**
   * Revokes a token: refused (401), and its streams ended, by this replica at once and by every
   * other within GANTRY_TOKEN_SYNC_MS and one read. Repeating it is harmless.
   */
  async revoke(who: Principal, id: string): Promise<void> {
    const revoked = UUID.test(id) ? await revokeApiToken(autocommit(this.ds), id, new Date()) : null;
    if (!revoked) throw new ApiError(ErrorCode.NOT_FOUND, `token ${id} not found`);
    this.registry.learnRevocation(id, revoked.revokedAt!);
    await this.audit.record(who, 'tokens.revoke', id, { owner: revoked.owner, role: revoked.role });
  }
}

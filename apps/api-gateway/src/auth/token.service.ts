import { Inject, Injectable } from '@nestjs/common';
import { hash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { DataSource } from 'typeorm';
import { autocommit, findApiTokenBySecretHash, insertApiToken } from '@gantry/persistence';
import { CONFIG } from '@gantry/runtime';
import { GatewayEnv } from '../config';
import { Principal, Role } from './principal';

const sha256 = (s: string) => hash('sha256', s, 'hex');
/** Positive lookups are cached briefly so a request costs no database round trip; tokens are never revoked yet. */
const CACHE_TTL_MS = 60_000;
const CACHE_MAX = 10_000;

@Injectable()
export class TokenService {
  private readonly adminDigest: Buffer;
  private readonly cache = new Map<string, { principal: Principal; until: number }>();

  constructor(@Inject(DataSource) private readonly ds: DataSource, @Inject(CONFIG) config: GatewayEnv) {
    this.adminDigest = Buffer.from(sha256(config.GANTRY_ADMIN_TOKEN), 'hex');
  }

  /** Mints a token; the secret is returned once and only its hash is stored. */
  async mint(owner: string, role: Role): Promise<{ id: string; owner: string; role: Role; token: string }> {
    const id = randomUUID();
    const token = `gnt_${randomBytes(32).toString('base64url')}`;
    await insertApiToken(autocommit(this.ds), { id, owner, role, secretSha256: sha256(token), createdAt: new Date() });
    return { id, owner, role, token };
  }

  async authenticate(secret: string): Promise<Principal | null> {
    const digest = sha256(secret);
    // Comparing digests keeps the comparison constant-time whatever the token's length.
    if (timingSafeEqual(Buffer.from(digest, 'hex'), this.adminDigest)) return { owner: 'admin', role: 'operator' };
    const hit = this.cache.get(digest);
    if (hit && hit.until > Date.now()) return hit.principal;
    const row = await findApiTokenBySecretHash(autocommit(this.ds), digest);
    if (!row) return null;
    const principal: Principal = { owner: row.owner, role: row.role };
    if (this.cache.size >= CACHE_MAX) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(digest, { principal, until: Date.now() + CACHE_TTL_MS });
    return principal;
  }
}

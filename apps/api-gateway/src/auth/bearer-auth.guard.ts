import { CanActivate, ExecutionContext, Inject, Injectable, createParamDecorator } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import { ApiError, ErrorCode } from '@gantry/platform';
import { CONFIG } from '@gantry/runtime';
import { GatewayEnv } from '../config';
import { Principal } from './principal';

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Authenticates `Authorization: Bearer <token>`; 401 when missing or unknown. */
@Injectable()
export class BearerAuthGuard implements CanActivate {
  private readonly adminDigest: Buffer;

  constructor(@Inject(CONFIG) config: GatewayEnv) {
    this.adminDigest = digest(config.GANTRY_ADMIN_TOKEN);
  }

  canActivate(ctx: ExecutionContext): boolean {
    const req = ctx.switchToHttp().getRequest<{ headers: Record<string, string | undefined>; principal?: Principal }>();
    const match = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
    if (!match) throw new ApiError(ErrorCode.UNAUTHENTICATED, 'missing bearer token');
    // Comparing digests keeps the comparison constant-time whatever the token's length.
    if (!timingSafeEqual(digest(match[1]), this.adminDigest)) throw new ApiError(ErrorCode.UNAUTHENTICATED, 'unknown token');
    req.principal = { owner: 'admin', role: 'operator' };
    return true;
  }
}

export const CurrentPrincipal = createParamDecorator((_data: unknown, ctx: ExecutionContext): Principal => {
  return ctx.switchToHttp().getRequest<{ principal: Principal }>().principal;
});

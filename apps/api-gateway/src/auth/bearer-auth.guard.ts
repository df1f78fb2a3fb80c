import { CanActivate, ExecutionContext, Injectable, createParamDecorator } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiError, ErrorCode } from '@gantry/platform';
import { Principal, Role } from './principal';
import { ROLES_KEY } from './roles.decorator';
import { TokenService } from './token.service';

/** `Authorization: Bearer <token>`: 401 when missing or unknown, 403 when the role is not allowed. */
@Injectable()
export class BearerAuthGuard implements CanActivate {
  constructor(private readonly tokens: TokenService, private readonly reflector: Reflector) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const req = ctx.switchToHttp().getRequest<{ headers: Record<string, string | undefined>; principal?: Principal }>();
    const match = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
    if (!match) throw new ApiError(ErrorCode.UNAUTHENTICATED, 'missing bearer token');
    const principal = await this.tokens.authenticate(match[1]);
    if (!principal) throw new ApiError(ErrorCode.UNAUTHENTICATED, 'unknown token');
    const allowed = this.reflector.getAllAndOverride<Role[] | undefined>(ROLES_KEY, [ctx.getHandler(), ctx.getClass()]);
    if (allowed && !allowed.includes(principal.role)) {
      throw new ApiError(ErrorCode.FORBIDDEN, `role ${principal.role} may not do this; needs ${allowed.join(' or ')}`);
    }
    req.principal = principal;
    return true;
  }
}

export const CurrentPrincipal = createParamDecorator((_data: unknown, ctx: ExecutionContext): Principal => {
  return ctx.switchToHttp().getRequest<{ principal: Principal }>().principal;
});

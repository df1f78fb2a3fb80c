import { CanActivate, ExecutionContext, Injectable, createParamDecorator } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiError, ErrorCode } from '@gantry/platform';
import { Principal, Role } from './principal';
import { GatedRequest, RequestGate } from './request-gate';
import { ROLES_KEY } from './roles.decorator';

/**
 * `Authorization: Bearer <token>`: 401 when missing or refused, 403 when the role is not allowed.
 * RequestGate has already authenticated every `/v1/` request before its body was read; this
 * authenticates only a request the gate did not see, so no route depends on the gate's matching.
 */
@Injectable()
export class BearerAuthGuard implements CanActivate {
  constructor(
    private readonly gate: RequestGate,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const req = ctx.switchToHttp().getRequest<GatedRequest>();
    const principal = (req.principal ??= await this.gate.authenticate(req));
    const allowed = this.reflector.getAllAndOverride<Role[] | undefined>(ROLES_KEY, [ctx.getHandler(), ctx.getClass()]);
    if (allowed && !allowed.includes(principal.role)) {
      throw new ApiError(ErrorCode.FORBIDDEN, `role ${principal.role} may not do this; needs ${allowed.join(' or ')}`);
    }
    return true;
  }
}

export const CurrentPrincipal = createParamDecorator((_data: unknown, ctx: ExecutionContext): Principal => {
  return ctx.switchToHttp().getRequest<{ principal: Principal }>().principal;
});

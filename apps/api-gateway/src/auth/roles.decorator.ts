import { SetMetadata } from '@nestjs/common';
import { Role } from './principal';

export const ROLES_KEY = 'gantry:roles';

/** Roles allowed on a handler or controller; without it any authenticated caller is allowed. */
export const Roles = (...roles: Role[]) => SetMetadata(ROLES_KEY, roles);

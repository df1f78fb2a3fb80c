export type Role = 'user' | 'operator';

/** Who is calling: owner comes from the token, never from the body. */
export interface Principal {
  owner: string;
  role: Role;
  /** The token's id; null for GANTRY_ADMIN_TOKEN, which has no row. */
  tokenId: string | null;
  /** The caller's network address (the socket's peer), for the audit log. */
  address: string | null;
}

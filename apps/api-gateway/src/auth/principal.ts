export type Role = 'user' | 'operator';

/** Who is calling: owner comes from the token, never from the body. */
export interface Principal {
  owner: string;
  role: Role;
}

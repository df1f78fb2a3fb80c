import { GantryApiError, GantryClient } from '@gantry/client';

const TOKEN_KEY = 'gantry.token';

/** Who is signed in, and the client that speaks for them. */
export interface Session {
  client: GantryClient;
  owner: string;
  role: 'user' | 'operator';
}

/** A client for this origin's API; bounded retries keep a dead gateway from hanging the page. */
function clientFor(token: string): GantryClient {
  return new GantryClient({ baseUrl: location.origin, token, retry: { maxRetries: 2, baseDelayMs: 200, maxDelayMs: 2_000 }, timeoutMs: 15_000 });
}

/**
 * Signs in with a pasted token: the gateway says whose it is (GET /v1/whoami). The token is kept in
 * sessionStorage only: it is gone when the tab closes, and other tabs do not see it.
 */
export async function signIn(token: string): Promise<Session> {
  const client = clientFor(token);
  try {
    const me = await client.whoami();
    sessionStorage.setItem(TOKEN_KEY, token);
    return { client, owner: me.owner, role: me.role };
  } catch (e) {
    if (e instanceof GantryApiError && e.status === 401) throw new Error('The gateway does not know this token (or it has expired or been revoked).');
    throw e;
  }
}

export function storedToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function signOut(): void {
  sessionStorage.removeItem(TOKEN_KEY);
}

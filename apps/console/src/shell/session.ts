import { GantryApiError, GantryClient } from '@gantry/client';

const TOKEN_KEY = 'gantry.token';
/** Who the token was when it signed in, so a reload draws at once (checked again in the background). */
const WHO_KEY = 'gantry.who';

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
    sessionStorage.setItem(WHO_KEY, JSON.stringify({ owner: me.owner, role: me.role }));
    return { client, owner: me.owner, role: me.role };
  } catch (e) {
    if (e instanceof GantryApiError && e.status === 401) throw new Error('The gateway does not know this token (or it has expired or been revoked).');
    throw e;
  }
}

export function storedToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

/**
 * The session this tab signed in with, without a round trip: a reload shows its page at once. The
 * caller confirms it with `confirmSession` (the token may have been revoked since). The role only
 * decides which controls are shown; the API checks every call itself.
 */
export function storedSession(): Session | null {
  const token = storedToken();
  const who = sessionStorage.getItem(WHO_KEY);
  if (!token || !who) return null;
  try {
    const { owner, role } = JSON.parse(who) as { owner: string; role: 'user' | 'operator' };
    return { client: clientFor(token), owner, role };
  } catch {
    return null;
  }
}

/** Whether the gateway still takes the session's token (false only when it says 401). */
export async function confirmSession(s: Session): Promise<boolean> {
  try {
    await s.client.whoami();
    return true;
  } catch (e) {
    return !(e instanceof GantryApiError && e.status === 401);
  }
}

export function signOut(): void {
  sessionStorage.removeItem(TOKEN_KEY);
  sessionStorage.removeItem(WHO_KEY);
}

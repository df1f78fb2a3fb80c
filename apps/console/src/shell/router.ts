/** The console's routes, under /ui/ (the gateway answers every /ui/* path with the console). */
export type Route =
  | { page: 'overview' }
  | { page: 'jobs'; query: URLSearchParams }
  | { page: 'job'; id: string }
  | { page: 'nodes'; query: URLSearchParams }
  | { page: 'node'; id: string }
  | { page: 'queues' }
  | { page: 'usage' }
  | { page: 'not-found' };

export const BASE = '/ui/';

/** The route of a location under BASE. Pure, for the router and its spec. */
export function parseRoute(pathname: string, search: string): Route {
  const rest = pathname.toLowerCase().startsWith(BASE) ? pathname.slice(BASE.length) : pathname === '/ui' ? '' : null;
  if (rest === null) return { page: 'not-found' };
  const parts = rest.split('/').filter(Boolean).map(decodeURIComponent);
  const query = new URLSearchParams(search);
  if (parts.length === 0) return { page: 'overview' };
  if (parts[0] === 'jobs' && parts.length === 1) return { page: 'jobs', query };
  if (parts[0] === 'jobs' && parts.length === 2) return { page: 'job', id: parts[1] };
  if (parts[0] === 'nodes' && parts.length === 1) return { page: 'nodes', query };
  if (parts[0] === 'nodes' && parts.length === 2) return { page: 'node', id: parts[1] };
  if (parts[0] === 'queues' && parts.length === 1) return { page: 'queues' };
  if (parts[0] === 'usage' && parts.length === 1) return { page: 'usage' };
  return { page: 'not-found' };
}

export const href = {
  overview: () => BASE,
  jobs: (query?: Record<string, string | undefined>) => `${BASE}jobs${toSearch(query)}`,
  job: (id: string) => `${BASE}jobs/${encodeURIComponent(id)}`,
  nodes: (query?: Record<string, string | undefined>) => `${BASE}nodes${toSearch(query)}`,
  node: (id: string) => `${BASE}nodes/${encodeURIComponent(id)}`,
  queues: () => `${BASE}queues`,
  usage: () => `${BASE}usage`,
};

function toSearch(query?: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v) q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** Moves to a console URL without reloading; the app listens for 'gantry:navigate' and popstate. */
export function navigate(url: string, replace = false): void {
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  window.dispatchEvent(new Event('gantry:navigate'));
}

/** What the gateway's bulk enrollment answers (POST /v1/nodes/enrollments). */
interface EnrollmentAnswer {
  items: Array<{ nodeId: string; credential: string }>;
}

/** Nodes per enrollment request (the route's limit). */
const PER_REQUEST = 1000;

/** What a node declares it has when it is enrolled (the `inventory` of POST /v1/nodes/enrollments, ADR 0035). */
export interface DeclaredInventory {
  gpus: { model: string; count: number } | null;
  cpuCores: number;
  memoryMiB: number;
  address: string | null;
}

/** Nodes to enroll, each with the inventory to declare for it, or null to let its first report be pinned. */
export type NodesToEnroll = ReadonlyMap<string, DeclaredInventory | null>;

/**
 * Enrolls nodes through the gateway with an operator token and returns each one's credential: how
 * a simulated fleet (and a dev agent) gets credentials for itself. A real node is enrolled by an
 * operator (`gantry nodes enroll`), who hands its agent the credential (GANTRY_NODE_CREDENTIAL):
 * an operator token has no business on every host. Enrolling again rotates the credential. Nodes
 * that declare the same inventory go in one request (the route takes one inventory per request).
 * Retries for up to `deadlineMs` while the gateway is unreachable or answers 5xx.
 */
export async function enrollThroughGateway(url: string, token: string, nodes: NodesToEnroll, deadlineMs = 60_000): Promise<Map<string, string>> {
  const credentials = new Map<string, string>();
  const deadline = Date.now() + deadlineMs;
  const shapes = new Map<string, { inventory: DeclaredInventory | null; nodeIds: string[] }>();
  for (const [nodeId, inventory] of nodes) {
    const key = JSON.stringify(inventory);
    const shape = shapes.get(key) ?? { inventory, nodeIds: [] };
    shape.nodeIds.push(nodeId);
    shapes.set(key, shape);
  }
  const requests = [...shapes.values()].flatMap(({ inventory, nodeIds }) =>
    Array.from({ length: Math.ceil(nodeIds.length / PER_REQUEST) }, (_, i) => ({ inventory, chunk: nodeIds.slice(i * PER_REQUEST, (i + 1) * PER_REQUEST) })),
  );
  for (const { inventory, chunk } of requests) {
    for (let attempt = 0; ; attempt++) {
      let failure: string;
      try {
        const res = await fetch(`${url.replace(/\/$/, '')}/v1/nodes/enrollments`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ nodeIds: chunk, ...(inventory ? { inventory } : {}) }),
          signal: AbortSignal.timeout(10_000),
        });
        if (res.status === 201) {
          for (const item of ((await res.json()) as EnrollmentAnswer).items) credentials.set(item.nodeId, item.credential);
          break;
        }
        const text = (await res.text()).slice(0, 500);
        if (res.status < 500 && res.status !== 429) throw new Error(`enrollment refused: ${res.status} ${text}`);
        failure = `${res.status} ${text}`;
      } catch (e) {
        if ((e as Error).message.startsWith('enrollment refused')) throw e;
        failure = (e as Error).message;
      }
      if (Date.now() > deadline) throw new Error(`could not enroll through ${url}: ${failure}`);
      await new Promise((r) => setTimeout(r, Math.min(2_000, 100 * 2 ** attempt)));
    }
  }
  return credentials;
}

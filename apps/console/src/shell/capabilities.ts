/**
 * What the gateway serving this console can do, from its own API document (/openapi.json): routes
 * that later versions add (drain, explain, logs) are offered only where they exist.
 */
export class Capabilities {
  private constructor(private readonly operations: ReadonlySet<string>) {}

  static async load(): Promise<Capabilities> {
    try {
      const res = await fetch('/openapi.json', { headers: { accept: 'application/json' } });
      const doc = (await res.json()) as { paths?: Record<string, Record<string, unknown>> };
      const ops = new Set<string>();
      for (const [path, item] of Object.entries(doc.paths ?? {})) for (const method of Object.keys(item)) ops.add(`${method.toUpperCase()} ${path}`);
      return new Capabilities(ops);
    } catch {
      return new Capabilities(new Set());
    }
  }

  has(method: string, path: string): boolean {
    return this.operations.has(`${method.toUpperCase()} ${path}`);
  }
}

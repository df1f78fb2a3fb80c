import type { NetworkInterfaceInfo } from 'node:os';

/**
 * Where a real agent's node listens, sent in its heartbeats as `address` (a gang's MASTER_ADDR when
 * the node holds rank 0): GANTRY_NODE_ADDRESS when given; else the first IPv4 address of a
 * non-internal interface, in the order the OS lists them (on a GPU node, usually the primary NIC);
 * else the host name. An operator whose ranks must meet on another network (InfiniBand, a pod
 * network) sets GANTRY_NODE_ADDRESS.
 */
export function nodeAddress(configured: string | undefined, interfaces: NodeJS.Dict<NetworkInterfaceInfo[]>, hostname: string): string {
  if (configured) return configured;
  for (const addrs of Object.values(interfaces)) {
    for (const a of addrs ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return hostname;
}

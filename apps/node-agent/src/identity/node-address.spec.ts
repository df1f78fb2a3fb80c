import type { NetworkInterfaceInfo } from 'node:os';
import { nodeAddress } from './node-address';

const nic = (address: string, family: 'IPv4' | 'IPv6', internal = false) => ({ address, family, internal }) as NetworkInterfaceInfo;

describe('nodeAddress', () => {
  it.each<[string, string | undefined, NodeJS.Dict<NetworkInterfaceInfo[]>, string]>([
    ['the configured address wins', '10.9.0.1', { eth0: [nic('10.0.0.5', 'IPv4')] }, '10.9.0.1'],
    [
      'the first external IPv4',
      undefined,
      { lo: [nic('127.0.0.1', 'IPv4', true)], eth0: [nic('fe80::1', 'IPv6'), nic('10.0.0.5', 'IPv4')], eth1: [nic('10.1.0.5', 'IPv4')] },
      '10.0.0.5',
    ],
    ['loopback only: the host name', undefined, { lo: [nic('127.0.0.1', 'IPv4', true)] }, 'gpu-host-7'],
    ['no interfaces: the host name', undefined, {}, 'gpu-host-7'],
  ])('%s', (_n, configured, interfaces, expected) => expect(nodeAddress(configured, interfaces, 'gpu-host-7')).toBe(expected));
});

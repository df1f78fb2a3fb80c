import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GpuDeviceFiles } from './gpu-device-files';

describe('GpuDeviceFiles', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'gpu-dev-'));
    mkdirSync(join(root, 'dev'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));
  const touch = (...names: string[]) => names.forEach((n) => writeFileSync(join(root, 'dev', n), ''));
  const gpu = (busId: string, minor: number) => {
    mkdirSync(join(root, 'proc/driver/nvidia/gpus', busId), { recursive: true });
    writeFileSync(join(root, 'proc/driver/nvidia/gpus', busId, 'information'), `Model: NVIDIA H100\nIRQ: 42\nDevice Minor: ${minor}\n`);
  };

  it("maps indices (PCI bus order) to the driver's minor numbers and keeps the control devices", () => {
    touch('nvidiactl', 'nvidia-uvm', 'nvidia0', 'nvidia1', 'nvidia2');
    gpu('0000:c1:00.0', 0);
    gpu('0000:41:00.0', 2);
    gpu('0000:81:00.0', 1);
    const d = new GpuDeviceFiles(join(root, 'dev'), join(root, 'proc'));
    expect(d.present).toBe(true);
    expect(d.filesFor([0, 2]).map((f) => f.slice(root.length))).toEqual(['/dev/nvidiactl', '/dev/nvidia-uvm', '/dev/nvidia2', '/dev/nvidia0']);
  });

  it('takes the index for the minor without the driver, and leaves out files that do not exist', () => {
    touch('nvidiactl', 'nvidia3');
    const d = new GpuDeviceFiles(join(root, 'dev'), join(root, 'proc'));
    expect(d.filesFor([3, 4]).map((f) => f.slice(root.length))).toEqual(['/dev/nvidiactl', '/dev/nvidia3']);
  });

  it('says a host without the driver has no device files to hide', () => {
    const d = new GpuDeviceFiles(join(root, 'dev'), join(root, 'proc'));
    expect(d.present).toBe(false);
    expect(d.filesFor([0])).toEqual([]);
  });
});

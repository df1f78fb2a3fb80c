import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, copyFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A local image (no registry is reachable from the test machines): busybox, as root's podman stores it. */
export const TEST_IMAGE = 'localhost/gantry-busybox:test';

/**
 * podman's configuration for the tests' containers (CONTAINERS_CONF): runc with cgroupfs, which
 * work under the hybrid cgroup layout of the test machines (crun refuses it), and ulimits no higher
 * than the machines let a root process raise them to (podman's defaults are refused there).
 */
const CONTAINERS_CONF = `[containers]
default_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
`;

/**
 * What an agent needs to run the tests' container jobs with podman: the env naming the
 * configuration, and TEST_IMAGE, imported from the host's busybox when missing (test set-up
 * installs podman, runc and busybox-static).
 */
export function testContainerRuntime(): { env: Record<string, string>; image: string } {
  const dir = join(tmpdir(), 'gantry-podman');
  mkdirSync(dir, { recursive: true });
  const conf = join(dir, 'containers.conf');
  writeFileSync(conf, CONTAINERS_CONF);
  const env = { ...process.env, CONTAINERS_CONF: conf };
  try {
    execFileSync('podman', ['image', 'exists', TEST_IMAGE], { env, stdio: 'ignore' });
  } catch {
    const root = mkdtempSync(join(tmpdir(), 'gantry-image-'));
    try {
      mkdirSync(join(root, 'bin'));
      mkdirSync(join(root, 'tmp'));
      chmodSync(join(root, 'tmp'), 0o1777);
      copyFileSync('/bin/busybox', join(root, 'bin', 'busybox'));
      chmodSync(join(root, 'bin', 'busybox'), 0o755);
      for (const applet of ['sh', 'id', 'cat', 'ls', 'sleep', 'env', 'echo', 'readlink', 'touch', 'kill', 'ps', 'grep', 'tr'])
        symlinkSync('busybox', join(root, 'bin', applet));
      const tar = join(root, '..', `${root.split('/').pop()}.tar`);
      execFileSync('tar', ['-C', root, '-cf', tar, '.']);
      execFileSync('podman', ['import', '--change', 'ENV PATH=/bin', tar, TEST_IMAGE], { env, stdio: 'ignore' });
      rmSync(tar, { force: true });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }
  return { env: { CONTAINERS_CONF: conf }, image: TEST_IMAGE };
}

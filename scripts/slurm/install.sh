#!/usr/bin/env bash
# Installs Slurm 22.05 (Debian 12's slurm-wlm, with munge) for bench:churn-slurm, the same-host
# baseline of bench:churn. Only the bench needs it; tests never do. Needs root and the Debian
# package mirror (a registry this machine reaches). Does nothing when slurmctld is already there.
set -euo pipefail
if command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v sbatch >/dev/null && command -v munged >/dev/null; then
  echo "slurm: $(slurmd -V) already installed"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "slurm: not installed, and installing it needs root (apt-get install slurm-wlm)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
# The package enables the daemons under systemd; the bench starts its own, with its own config.
echo "slurm: $(slurmd -V) installed"

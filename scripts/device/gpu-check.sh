#!/usr/bin/env bash
# What the node agent relies on about a real NVIDIA host, checked on one (issue 14; docs/gpu-nodes.md, ADR 0019):
#   1. the agent's exact nvidia-smi query, idle and with a GPU busy, saved for the parser's tests;
#   2. CUDA_VISIBLE_DEVICES as the agent sets it (with CUDA_DEVICE_ORDER=PCI_BUS_ID) names the device
#      nvidia-smi calls by that index, and an empty value hides every GPU from CUDA;
#   3. what a job process can see of cgroups and container runtimes there.
# Needs nvidia-smi and a python3 with torch. Writes its findings to $OUT (default ./gpu-check-out).
set -u
OUT=${OUT:-./gpu-check-out}
mkdir -p "$OUT"
QUERY='--query-gpu=index,name,memory.total,memory.used,utilization.gpu,pstate'
section() { echo; echo "## $*"; }

section "nvidia-smi -L and the versions"
nvidia-smi -L
nvidia-smi --query-gpu=index,uuid,pci.bus_id,driver_version --format=csv,noheader

section "the agent's query, idle (5 samples, wall time each)"
for i in 1 2 3 4 5; do
  start=$(date +%s%N)
  nvidia-smi "$QUERY" --format=csv,noheader,nounits > "$OUT/nvidia-smi-idle.csv"
  echo "sample $i: $(( ($(date +%s%N) - start) / 1000000 )) ms"
done
cat "$OUT/nvidia-smi-idle.csv"

section "the agent's query with GPU 0 busy (a 20 s matmul loop)"
python3 - <<'PY' &
import time, torch
a = torch.randn(8192, 8192, device='cuda', dtype=torch.bfloat16)
end = time.time() + 20
while time.time() < end:
    b = a @ a
torch.cuda.synchronize()
PY
busy=$!
sleep 8
nvidia-smi "$QUERY" --format=csv,noheader,nounits | tee "$OUT/nvidia-smi-busy.csv"
wait $busy

section "CUDA_VISIBLE_DEVICES as the agent sets it"
cat > /tmp/visible.py <<'PY'
import os, torch
n = torch.cuda.device_count()
uuids = [str(torch.cuda.get_device_properties(i).uuid) for i in range(n)]
print(f"CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')!r} devices={n} uuids={uuids}")
PY
CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=0 NVIDIA_VISIBLE_DEVICES=0 python3 /tmp/visible.py
CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES= NVIDIA_VISIBLE_DEVICES=none python3 /tmp/visible.py
CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=1 python3 /tmp/visible.py 2>&1 | tail -1
nvidia-smi --query-gpu=index,uuid --format=csv,noheader

section "cgroups and container runtimes a job would meet"
cat /proc/self/cgroup
mount | grep -i cgroup || echo "no cgroup mount"
ls /sys/fs/cgroup 2>&1 | head -20
for r in podman docker nvidia-container-cli nvidia-ctk node; do printf '%s: %s\n' "$r" "$(command -v $r || echo absent)"; done
uname -a

#!/bin/sh
# Makes the study in this directory: a 4 GiB loop device (direct I/O, so the image file stays out of the
# host's page cache), a 256 MiB memory cgroup around the sweep (so the runner's 1 GiB file cannot stay in
# the page cache either), then `bonnieboard-runner sweep study.plan`. As root, from this directory:
#   sh make_study.sh ../../runner/bonnieboard-runner
# Everything it makes (the image, the loop device, the cgroup, the mountpoint) is removed at the end.
set -eu
runner=$(realpath "${1:?usage: make_study.sh PATH-TO-bonnieboard-runner}")
work=/tmp/bonnieboard-study
cgroup=/sys/fs/cgroup/memory/bonnieboard-study   # cgroup v1; on v2: /sys/fs/cgroup/..., memory.max
mkdir -p "$work"
rm -f "$work/disk.img"
fallocate -l 4G "$work/disk.img"
dev=$(losetup --find --show --direct-io=on "$work/disk.img")
cleanup() {
    umount "$work/mnt" 2>/dev/null || true
    losetup -d "$dev"
    rm -f "$work/disk.img"
    rmdir "$work/mnt" "$work" 2>/dev/null || true
    rmdir "$cgroup" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# the plan names the device attached now; the rest of the plan is as committed
sed -i "s|^device = .*|device = $dev|" study.plan
mkdir -p "$cgroup"
echo $((256 * 1024 * 1024)) > "$cgroup/memory.limit_in_bytes"
sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$cgroup" \
    "$runner" sweep study.plan --yes-destroy "$dev"

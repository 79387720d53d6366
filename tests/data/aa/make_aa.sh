#!/bin/sh
# Remake the A/A data: one unchanged setup run 12 times on tmpfs and 12 times on ext4 (a loop device backed
# by a file on the machine's disk), with Debian's bonnie++ 2.00a. Split into fake "configurations" these
# runs must come out within noise: bench/verdict_calibration.py counts how often the board says otherwise.
# Needs root (mount, losetup) and: apt-get install -y bonnie++ e2fsprogs
# Usage: sudo sh tests/data/aa/make_aa.sh [OUT_DIR]   (default: the folder this script is in)
#   RUNS=12 (runs per file system)   IMG_DIR=/var/tmp (where the ext4 image goes: a disk-backed directory)
# Writes OUT_DIR/tmpfs.csv and OUT_DIR/ext4.csv (one bonnie++ CSV line per run, in run order),
# OUT_DIR/runs.tsv (per run: when, how long, the load average before it) and OUT_DIR/environment.txt.
set -eu

OUT=$(cd "${1:-$(dirname "$0")}" && pwd)
RUNS=${RUNS:-12}
IMG_DIR=${IMG_DIR:-/var/tmp}
# The command of the issue, exactly: 64 MiB file (-r 32: bonnie++ accepts a file under twice the RAM),
# one 1,024-file create/stat/delete phase, CSV on stdout. Only -m and -d are added per file system.
BONNIE_OPTS="-u root -s 64M -r 32 -n 1 -q"

WORK=$(mktemp -d /tmp/bonnie-aa.XXXXXX)
IMG=""
LOOP=""
cleanup() {
    set +e
    for dir in "$WORK"/mnt-*; do
        mountpoint -q "$dir" && umount "$dir"
    done
    [ -n "$LOOP" ] && losetup -d "$LOOP"
    [ -n "$IMG" ] && rm -f "$IMG"
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

mkdir "$WORK/mnt-tmpfs" "$WORK/mnt-ext4"
mount -t tmpfs -o size=512m tmpfs "$WORK/mnt-tmpfs"

IMG=$(mktemp "$IMG_DIR/bonnie-aa-ext4.XXXXXX.img")
fallocate -l 1G "$IMG"
# --direct-io=on: the loop device's I/O goes to the disk, not into the host's page cache of the image file
LOOP=$(losetup -f --show --direct-io=on "$IMG")
mkfs.ext4 -q -F "$LOOP" >/dev/null
mount "$LOOP" "$WORK/mnt-ext4"

{
    echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "bonnie++: $(dpkg-query -W -f='${Package} ${Version}' bonnie++ 2>/dev/null || echo unknown)"
    echo "command: bonnie++ $BONNIE_OPTS -m aa-FS -d MOUNTPOINT   ($RUNS runs per file system, one after another)"
    echo "kernel: $(uname -srm)"
    echo "cpus: $(nproc)   $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
    echo "ram: $(awk '/MemTotal/ {printf "%d MiB", $2 / 1024}' /proc/meminfo)"
    echo "mke2fs: $(mkfs.ext4 -V 2>&1 | head -n 1)"
    echo "image: $IMG_DIR on $(findmnt -n -o SOURCE,FSTYPE -T "$IMG_DIR"), 1 GiB, fallocate; loop device --direct-io=on"
    echo "mount tmpfs: $(findmnt -n -o SOURCE,FSTYPE,OPTIONS "$WORK/mnt-tmpfs")"
    echo "mount ext4: $(findmnt -n -o FSTYPE,OPTIONS "$WORK/mnt-ext4")"
    echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$OUT/environment.txt"

printf 'fs\trun\tstart_utc\tseconds\tload1_before\n' >"$OUT/runs.tsv"
for fs in tmpfs ext4; do
    : >"$OUT/$fs.csv"
    run=1
    while [ "$run" -le "$RUNS" ]; do
        echo "aa-$fs run $run of $RUNS" >&2
        load=$(cut -d' ' -f1 /proc/loadavg)
        start=$(date -u +%Y-%m-%dT%H:%M:%SZ)
        t0=$(date +%s)
        # shellcheck disable=SC2086  # BONNIE_OPTS is a list of options
        if ! bonnie++ $BONNIE_OPTS -m "aa-$fs" -d "$WORK/mnt-$fs" >>"$OUT/$fs.csv" 2>"$WORK/report"; then
            cat "$WORK/report" >&2
            exit 1
        fi
        printf '%s\t%s\t%s\t%s\t%s\n' "$fs" "$run" "$start" "$(($(date +%s) - t0))" "$load" >>"$OUT/runs.tsv"
        run=$((run + 1))
    done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/environment.txt"

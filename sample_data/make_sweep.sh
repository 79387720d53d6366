#!/bin/sh
# Remake the sweep-*.csv files: Debian's bonnie++ 2.00a, three repeats (-x 3) of six configurations
# on three media of one machine. Needs root (loop devices, mount) and: apt-get install -y bonnie++ xfsprogs
# Usage: sudo sh sample_data/make_sweep.sh [OUT_DIR]   (default: the folder this script is in)
set -eu

OUT=$(cd "${1:-$(dirname "$0")}" && pwd)
WORK=$(mktemp -d /tmp/bonnie-sweep.XXXXXX)
LOOPS=""
cleanup() {
    for dir in "$WORK"/mnt-*; do mountpoint -q "$dir" && umount "$dir"; done
    for dev in $LOOPS; do losetup -d "$dev"; done
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

# 3 GiB file: read back from the page cache it still takes over 0.5 s, so get_block is measured, not +++++.
# 262144 seeks (instead of 8192) for the same reason. -r 1536 lets a 3 GiB file pass bonnie++'s
# "twice the RAM" check on this 24 GiB machine: the block reads come from the cache, and the runs say so.
# -n 8: 8192 files, so the -b runs (an fsync per file) finish in about 20 s per phase.
COMMON="-u root -q -s 3g:8k:256k -r 1536 -n 8 -x 3"

# A loop device whose I/O bypasses the host page cache of the image file (--direct-io=on).
loop_fs() {  # loop_fs FS MKFS...
    fs=$1
    shift
    fallocate -l 4G "$WORK/$fs.img"
    dev=$(losetup -f --show --direct-io=on "$WORK/$fs.img")
    LOOPS="$LOOPS $dev"
    "$@" "$dev" >/dev/null
    mkdir "$WORK/mnt-$fs"
    mount "$dev" "$WORK/mnt-$fs"
}

mkdir "$WORK/mnt-tmpfs"
mount -t tmpfs -o size=4g tmpfs "$WORK/mnt-tmpfs"
loop_fs ext4 mkfs.ext4 -q -F
loop_fs xfs mkfs.xfs -q -f

for fs in tmpfs ext4 xfs; do
    dev=loop
    [ "$fs" = tmpfs ] && dev=ram
    for mode in async sync; do
        sync_flag=""
        [ "$mode" = sync ] && sync_flag="-b"
        name="sweep-$fs-$dev-$mode"
        echo "$name" >&2
        # shellcheck disable=SC2086  # COMMON is a list of options
        bonnie++ $COMMON $sync_flag -m "$name" -d "$WORK/mnt-$fs" >"$OUT/$name.csv"
    done
done

#!/bin/sh
# Remake the sample history: a nightly job on the machine "nightly-loop" that runs bonnieboard-runner on two
# configurations, ext4 and xfs, each on its own loop device, both throttled by the blkio cgroup (v1) or io.max
# (v2). Two things change partway, as they do on real machines, without the job's tags changing:
#   night STEP_NIGHT on: the throttle drops from 32 MiB/s to 16 MiB/s on both devices (kernel-enforced);
#   night MOUNT_NIGHT on: ext4 is mounted noatime,dirsync instead of relatime (fstab changed, then a remount):
#   dirsync writes every directory change through, so creates and deletes wait for the journal.
# The kernel lists noatime among the mount's options and dirsync among the superblock's (mountinfo), which is
# where the documents' filesystem.mount_options and .super_options show them.
# The runs are made one after another in a few minutes; each document's started_at/finished_at is then moved to
# its night (2026-10-01T02:00:00Z + N-1 days, ext4 at 02:00:00, xfs as long after as it really started after
# ext4), keeping each run's duration. runs.tsv keeps the real times.
# Needs root (mount, losetup, cgroups) and: apt-get install -y e2fsprogs xfsprogs; make -C runner
# Usage: sudo sh sample_data/history/make_history.sh [RUNNER]
#   NIGHTS=22 STEP_NIGHT=9 MOUNT_NIGHT=15 IMG_DIR=/var/tmp
# Writes sample_data/history/nightly-loop/: nNN-ext4.csv, nNN-xfs.csv (one CSV line each), nNN-ext4.json,
# nNN-xfs.json (the documents), runs.tsv and environment.txt.
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
RUNNER_SRC=${1:-$HERE/../../runner/bonnieboard-runner}
NIGHTS=${NIGHTS:-22}
STEP_NIGHT=${STEP_NIGHT:-9}
MOUNT_NIGHT=${MOUNT_NIGHT:-15}
IMG_DIR=${IMG_DIR:-/var/tmp}
MiB=1048576
NAME=nightly-loop
FIRST_NIGHT=2026-10-01T02:00:00Z
# A 32 MiB file in a 24 MiB memory cgroup: the page cache cannot hold it, get_block reads the device. -D: put_block
# with O_DIRECT, because under cgroup v1 the kernel's flusher writes buffered pages back as the root cgroup, past
# the throttle. -f: the per-character tests cannot run on an O_DIRECT file. -n 2: 2,048 files, which ext4 with
# relatime creates and deletes in under 0.5 s (+++++) and with dirsync in about 1 s; many more files need more
# kernel memory than the 24 MiB cgroup allows.
OPTS="-s 32:8192:64 -r 16 -n 2 -f -D"
MEMORY_LIMIT=$((24 * MiB))

[ -x "$RUNNER_SRC" ] || { echo "no runner at $RUNNER_SRC: make -C runner" >&2 && exit 2; }
OUT=$HERE/$NAME
WORK=$(mktemp -d /tmp/bonnieboard-nightly.XXXXXX)
# a copy: a rebuild of runner/ while this runs must not change the program under it
RUNNER=$WORK/bonnieboard-runner
cp "$RUNNER_SRC" "$RUNNER"
LOOPS=""
IMGS=""
CG_MEM=""
CG_IO=""
cleanup() {
    set +e
    for fs in ext4 xfs; do
        mountpoint -q "$WORK/mnt-$fs" && umount "$WORK/mnt-$fs"
    done
    for loop in $LOOPS; do losetup -d "$loop"; done
    for img in $IMGS; do rm -f "$img"; done
    for group in "$CG_MEM" "$CG_IO"; do
        [ -n "$group" ] || continue
        tries=0
        # the runner has exited, but the kernel may count it in the cgroup a moment longer
        until rmdir "$group" 2>/dev/null || [ "$tries" -ge 50 ]; do
            sleep 0.1
            tries=$((tries + 1))
        done
    done
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

v1_mount() {
    awk -v want="$1" '{ for (i = 1; $i != "-"; i++); if ($(i + 1) == "cgroup" && index("," $(i + 3) ",", "," want ",")) print $5 }' /proc/self/mountinfo | head -n 1
}

# Sets the read and write throttle of CG_IO on every device in MAJMINS to $1 bytes/s.
set_throttle() {
    for majmin in $MAJMINS; do
        if [ "$CG_VERSION" = v1 ]; then
            echo "$majmin $1" >"$CG_IO/blkio.throttle.read_bps_device"
            echo "$majmin $1" >"$CG_IO/blkio.throttle.write_bps_device"
        else
            echo "$majmin rbps=$1 wbps=$1" >"$CG_IO/io.max"
        fi
    done
    THROTTLE=$1
}

MAJMINS=""
for fs in ext4 xfs; do
    img=$(mktemp "$IMG_DIR/bonnieboard-nightly-$fs.XXXXXX.img")
    IMGS="$IMGS $img"
    truncate -s 1G "$img"
    if [ "$fs" = ext4 ]; then
        # no lazy initialisation: nothing writes in the background during the tests
        mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$img"
    else
        mkfs.xfs -q -f "$img"
    fi
    # without --direct-io the image sits in the host's page cache: the throttle sets the pace, not the shared disk
    loop=$(losetup --find --show "$img")
    LOOPS="$LOOPS $loop"
    [ "$fs" = ext4 ] && LOOP_EXT4=$loop
    MAJMINS="$MAJMINS $(cat "/sys/class/block/${loop#/dev/}/dev")"
    mkdir "$WORK/mnt-$fs"
    mount -o relatime "$loop" "$WORK/mnt-$fs"
done

mem_mount=$(v1_mount memory)
io_mount=$(v1_mount blkio)
if [ -n "$mem_mount" ] && [ -n "$io_mount" ]; then
    CG_VERSION=v1
    # under the cgroups this shell is in, so whatever limits the caller lives under still holds
    CG_MEM=$(echo "$mem_mount$(sed -n 's/^[0-9]*:memory:\(.*\)$/\1/p' /proc/self/cgroup)/bonnieboard-nightly-$$" | sed 's://*:/:g')
    CG_IO=$(echo "$io_mount$(sed -n 's/^[0-9]*:blkio:\(.*\)$/\1/p' /proc/self/cgroup)/bonnieboard-nightly-$$" | sed 's://*:/:g')
    mkdir "$CG_MEM" "$CG_IO"
    echo "$MEMORY_LIMIT" >"$CG_MEM/memory.limit_in_bytes"
else
    CG_VERSION=v2
    v2_mount=$(awk '{ for (i = 1; $i != "-"; i++); if ($(i + 1) == "cgroup2") print $5 }' /proc/self/mountinfo | head -n 1)
    [ -n "$v2_mount" ] || { echo "no cgroup hierarchy with blkio/io and memory" >&2 && exit 1; }
    parent=$v2_mount$(sed -n 's/^0::\(.*\)$/\1/p' /proc/self/cgroup)
    echo "+memory +io" >"$parent/cgroup.subtree_control"
    CG_IO=$(echo "$parent/bonnieboard-nightly-$$" | sed 's://*:/:g')
    mkdir "$CG_IO"
    echo "$MEMORY_LIMIT" >"$CG_IO/memory.max"
fi
set_throttle $((32 * MiB))

rm -rf "$OUT"
mkdir -p "$OUT"
{
    echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "runner: $("$RUNNER" --version 2>&1 | head -n 1)"
    echo "command: bonnieboard-runner -d MOUNTPOINT $OPTS -q -m $NAME --json nNN-FS.json   (ext4 then xfs, $NIGHTS nights, one after another)"
    echo "kernel: $(uname -srm)"
    echo "cpus: $(nproc)   $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
    echo "ram: $(awk '/MemTotal/ {printf "%d MiB", $2 / 1024}' /proc/meminfo)"
    echo "mke2fs: $(mkfs.ext4 -V 2>&1 | head -n 1)   mkfs.xfs: $(mkfs.xfs -V 2>&1 | head -n 1)"
    echo "images: $IMG_DIR on $(findmnt -n -o SOURCE,FSTYPE -T "$IMG_DIR"), 1 GiB sparse each; loop devices without direct I/O"
    echo "cgroups ($CG_VERSION): memory limit $MEMORY_LIMIT bytes in ${CG_MEM:-$CG_IO}; throttle in $CG_IO"
    echo "throttle: 32 MiB/s read and write on both devices; 16 MiB/s from night $STEP_NIGHT"
    echo "ext4 mount: relatime; noatime,dirsync from night $MOUNT_NIGHT.   xfs mount: relatime"
    echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$OUT/environment.txt"

# Moves a document's started_at and finished_at: started_at becomes $2 (seconds since the epoch), finished_at
# keeps its distance from it.
move_times() {
    started=$(sed -n 's/.*"started_at":"\([^"]*\)".*/\1/p' "$1")
    finished=$(sed -n 's/.*"finished_at":"\([^"]*\)".*/\1/p' "$1")
    new_finished=$(($2 + $(date -u -d "$finished" +%s) - $(date -u -d "$started" +%s)))
    sed -i -e "s/\"started_at\":\"$started\"/\"started_at\":\"$(date -u -d "@$2" +%Y-%m-%dT%H:%M:%SZ)\"/" \
        -e "s/\"finished_at\":\"$finished\"/\"finished_at\":\"$(date -u -d "@$new_finished" +%Y-%m-%dT%H:%M:%SZ)\"/" "$1"
}

first=$(date -u -d "$FIRST_NIGHT" +%s)
printf 'night\tfs\treal_start_utc\tseconds\tload1\tload5\tload15\tthrottle_bps\tmount_options\n' >"$OUT/runs.tsv"
night=1
while [ "$night" -le "$NIGHTS" ]; do
    [ "$night" -eq "$STEP_NIGHT" ] && set_throttle $((16 * MiB))
    if [ "$night" -eq "$MOUNT_NIGHT" ]; then
        # a fresh mount: util-linux's "remount,dirsync" leaves ext4's superblock flags as they were here
        umount "$WORK/mnt-ext4"
        mount -o noatime,dirsync "$LOOP_EXT4" "$WORK/mnt-ext4"
    fi
    night_start=""
    for fs in ext4 xfs; do
        base=$(printf '%s/n%02d-%s' "$OUT" "$night" "$fs")
        echo "night $night of $NIGHTS: $fs" >&2
        load=$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' '\t')
        t0=$(date +%s)
        [ -n "$night_start" ] || night_start=$t0
        # join the cgroups, then become the runner: it and everything it starts are limited
        sh -c 'while [ "$1" != -- ]; do echo $$ >"$1/cgroup.procs" || exit 97; shift; done; shift; exec "$@"' \
            sh ${CG_MEM:+"$CG_MEM"} "$CG_IO" -- "$RUNNER" -d "$WORK/mnt-$fs" $OPTS -q -m "$NAME" \
            --json "$base.json" >"$base.csv" 2>"$WORK/report" || {
            cat "$WORK/report" >&2
            exit 1
        }
        [ "$(wc -l <"$base.csv")" -eq 1 ] || { echo "night $night $fs printed not one CSV line" >&2 && exit 1; }
        move_times "$base.json" $((first + (night - 1) * 86400 + t0 - night_start))
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$night" "$fs" "$(date -u -d "@$t0" +%Y-%m-%dT%H:%M:%SZ)" \
            "$(($(date +%s) - t0))" "$load" "$THROTTLE" "$(findmnt -n -o OPTIONS "$WORK/mnt-$fs")" >>"$OUT/runs.tsv"
    done
    night=$((night + 1))
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/environment.txt"

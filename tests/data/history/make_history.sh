#!/bin/sh
# Remake one series of the history data: short runs of bonnieboard-runner, one after another, on one setup,
# each kept as its CSV line and its JSON document (which carries started_at and the system facts).
# Needs root (mount, losetup, cgroups) and: apt-get install -y e2fsprogs; make -C runner
# Usage: sudo sh tests/data/history/make_history.sh SERIES [RUNNER]
#   SERIES: ext4-throttled   40 runs on ext4 on a loop device throttled to 16 MiB/s by the blkio cgroup
#           throttle-step    the same setup, 20 runs at 16 MiB/s then 20 at 8 MiB/s (BEFORE=20 AFTER=20)
#           tmpfs            40 runs on a tmpfs
#   RUNNER: the runner binary (default runner/bonnieboard-runner of this repository)
#   RUNS=40 (ext4-throttled, tmpfs)   IMG_DIR=/var/tmp (where the loop device's image file goes)
# Writes tests/data/history/SERIES/: lines.csv (one CSV line per run, in run order), docs/NNN.json (run NNN's
# document), runs.tsv (per run: start, seconds, load averages before it, the throttle) and environment.txt.
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
SERIES=${1:?usage: make_history.sh ext4-throttled|throttle-step|tmpfs [RUNNER]}
RUNNER=$(cd "$(dirname "${2:-$HERE/../../../runner/bonnieboard-runner}")" && pwd)/$(basename "${2:-bonnieboard-runner}")
RUNS=${RUNS:-40}
BEFORE=${BEFORE:-20}
AFTER=${AFTER:-20}
IMG_DIR=${IMG_DIR:-/var/tmp}
MiB=1048576
# ext4: a 32 MiB file in a 24 MiB memory cgroup, so the page cache cannot hold it and get_block reads the
# device; -D writes put_block with O_DIRECT, because under cgroup v1 the kernel's flusher writes buffered
# pages back as the root cgroup, past the throttle (tests/runner/test_runner_limits.py found this). -f: the
# per-character tests cannot run on an O_DIRECT file. -n 1: more files than about 30,000 need more kernel
# memory than the 24 MiB cgroup allows (the kernel kills the runner), so the file tests stay under 0.5 s.
EXT4_OPTS="-s 32:8192:64 -r 16 -n 1 -f -D"
MEMORY_LIMIT=$((24 * MiB))
# tmpfs: no device at all; 2 GiB is what it takes for put_block and rewrite to last over 0.5 s here
# (tmpfs writes 1-3 GiB/s), 131,072 files for the creates and deletes, 2 MiB for the per-character tests.
TMPFS_OPTS="-s 2g -r 1024 -n 128 -f2"

case $SERIES in
ext4-throttled) NAME=history-ext4 ;;
throttle-step) NAME=history-step RUNS=$((BEFORE + AFTER)) ;;
tmpfs) NAME=history-tmpfs ;;
*) echo "unknown series $SERIES" >&2 && exit 2 ;;
esac
[ -x "$RUNNER" ] || { echo "no runner at $RUNNER: make -C runner" >&2 && exit 2; }

OUT=$HERE/$SERIES
WORK=$(mktemp -d /tmp/bonnieboard-history.XXXXXX)
MNT=$WORK/mnt
IMG=""
LOOP=""
CG_MEM=""
CG_IO=""
cleanup() {
    set +e
    mountpoint -q "$MNT" && umount "$MNT"
    [ -n "$LOOP" ] && losetup -d "$LOOP"
    [ -n "$IMG" ] && rm -f "$IMG"
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

# The mount point of the cgroup hierarchy whose mount has $1 among its options (v1), or "".
v1_mount() {
    awk -v want="$1" '{ for (i = 1; $i != "-"; i++); if ($(i + 1) == "cgroup" && index("," $(i + 3) ",", "," want ",")) print $5 }' /proc/self/mountinfo | head -n 1
}

# Sets the cgroup CG_IO's read and write throttle on the loop device to $1 bytes/s.
set_throttle() {
    if [ "$CG_VERSION" = v1 ]; then
        echo "$MAJMIN $1" >"$CG_IO/blkio.throttle.read_bps_device"
        echo "$MAJMIN $1" >"$CG_IO/blkio.throttle.write_bps_device"
    else
        echo "$MAJMIN rbps=$1 wbps=$1" >"$CG_IO/io.max"
    fi
    THROTTLE=$1
}

mkdir "$MNT"
if [ "$SERIES" = tmpfs ]; then
    mount -t tmpfs -o size=3g tmpfs "$MNT"
    OPTS=$TMPFS_OPTS
    THROTTLE=none
else
    IMG=$(mktemp "$IMG_DIR/bonnieboard-history.XXXXXX.img")
    truncate -s 1G "$IMG"
    # no lazy initialisation: nothing writes in the background during the tests
    mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$IMG"
    # Without --direct-io the image's blocks sit in the host's page cache, so the shared virtual disk under
    # /var/tmp does not set the pace: the throttle does.
    LOOP=$(losetup --find --show "$IMG")
    MAJMIN=$(cat "/sys/class/block/${LOOP#/dev/}/dev")
    mount "$LOOP" "$MNT"
    OPTS=$EXT4_OPTS
    # The cgroups go under the ones this shell is in, so whatever limits the caller lives under still holds.
    mem_mount=$(v1_mount memory)
    io_mount=$(v1_mount blkio)
    if [ -n "$mem_mount" ] && [ -n "$io_mount" ]; then
        CG_VERSION=v1
        CG_MEM=$mem_mount$(sed -n 's/^[0-9]*:memory:\(.*\)$/\1/p' /proc/self/cgroup)/bonnieboard-history-$$
        CG_MEM=$(echo "$CG_MEM" | sed 's://*:/:g')
        CG_IO=$io_mount$(sed -n 's/^[0-9]*:blkio:\(.*\)$/\1/p' /proc/self/cgroup)/bonnieboard-history-$$
        CG_IO=$(echo "$CG_IO" | sed 's://*:/:g')
        mkdir "$CG_MEM"
        echo "$MEMORY_LIMIT" >"$CG_MEM/memory.limit_in_bytes"
        mkdir "$CG_IO"
    else
        # cgroup v2: one cgroup holds both limits; its parent must hand it the memory and io controllers
        CG_VERSION=v2
        v2_mount=$(awk '{ for (i = 1; $i != "-"; i++); if ($(i + 1) == "cgroup2") print $5 }' /proc/self/mountinfo | head -n 1)
        [ -n "$v2_mount" ] || { echo "no cgroup hierarchy with blkio/io and memory" >&2 && exit 1; }
        parent=$v2_mount$(sed -n 's/^0::\(.*\)$/\1/p' /proc/self/cgroup)
        echo "+memory +io" >"$parent/cgroup.subtree_control"
        CG_IO=$(echo "$parent/bonnieboard-history-$$" | sed 's://*:/:g')
        mkdir "$CG_IO"
        echo "$MEMORY_LIMIT" >"$CG_IO/memory.max"
    fi
    set_throttle $((16 * MiB))
fi

rm -rf "$OUT"
mkdir -p "$OUT/docs"
{
    echo "series: $SERIES"
    echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "runner: $("$RUNNER" --version 2>&1 | head -n 1)"
    echo "command: bonnieboard-runner -d MOUNTPOINT $OPTS -q -m $NAME --json docs/NNN.json   ($RUNS runs, one after another)"
    echo "kernel: $(uname -srm)"
    echo "cpus: $(nproc)   $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
    echo "ram: $(awk '/MemTotal/ {printf "%d MiB", $2 / 1024}' /proc/meminfo)"
    echo "mount: $(findmnt -n -o SOURCE,FSTYPE,OPTIONS "$MNT")"
    if [ -n "$LOOP" ]; then
        echo "mke2fs: $(mkfs.ext4 -V 2>&1 | head -n 1)"
        echo "image: $IMG_DIR on $(findmnt -n -o SOURCE,FSTYPE -T "$IMG_DIR"), 1 GiB sparse; loop device without direct I/O"
        echo "cgroups ($CG_VERSION): memory limit $MEMORY_LIMIT bytes in ${CG_MEM:-$CG_IO}; throttle in $CG_IO"
    fi
    echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$OUT/environment.txt"

printf 'run\tstart_utc\tseconds\tload1\tload5\tload15\tthrottle_bps\n' >"$OUT/runs.tsv"
: >"$OUT/lines.csv"
run=1
while [ "$run" -le "$RUNS" ]; do
    if [ "$SERIES" = throttle-step ] && [ "$run" -eq $((BEFORE + 1)) ]; then
        set_throttle $((8 * MiB))
        echo "first run at 8 MiB/s: $run" >>"$OUT/environment.txt"
    fi
    doc=$(printf '%s/docs/%03d.json' "$OUT" "$run")
    echo "$SERIES run $run of $RUNS" >&2
    load=$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' '\t')
    start=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    t0=$(date +%s)
    set -- "$RUNNER" -d "$MNT"
    # shellcheck disable=SC2086  # OPTS is a list of options
    set -- "$@" $OPTS -q -m "$NAME" --json "$doc"
    if [ "$SERIES" = tmpfs ]; then
        "$@" >"$WORK/line" 2>"$WORK/report" || { cat "$WORK/report" >&2 && exit 1; }
    else
        # join the cgroups, then become the runner: it and everything it starts are limited
        sh -c 'while [ "$1" != -- ]; do echo $$ >"$1/cgroup.procs" || exit 97; shift; done; shift; exec "$@"' \
            sh ${CG_MEM:+"$CG_MEM"} "$CG_IO" -- "$@" >"$WORK/line" 2>"$WORK/report" || {
            cat "$WORK/report" >&2
            exit 1
        }
    fi
    [ "$(wc -l <"$WORK/line")" -eq 1 ] || { echo "run $run printed not one CSV line" >&2 && exit 1; }
    cat "$WORK/line" >>"$OUT/lines.csv"
    printf '%s\t%s\t%s\t%s\t%s\n' "$run" "$start" "$(($(date +%s) - t0))" "$load" "$THROTTLE" >>"$OUT/runs.tsv"
    run=$((run + 1))
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/environment.txt"

#!/bin/sh
# Remake the partly censored A/A data: one unchanged setup run 12 times, for each of two file counts, on a fresh
# tmpfs with Debian's bonnie++ 2.00a. At these counts a file test takes about bonnie++'s 0.5 s, so some runs of a
# test print +++++ and others a rate: the case where the +++++ bound decides a verdict, which a page of unchanged
# runs must not turn into ▲/▼ more often than its error control allows (tests/compare/test_verdict_calibration.py).
# Needs root (mount) and: apt-get install -y bonnie++
# Usage: sudo sh tests/data/aa_censored/make_aa_censored.sh [OUT_DIR]   (default: the folder this script is in)
#   RUNS=12 (runs per setup)   COUNTS="80 64" (-n of each setup, in units of 1,024 files)
# Writes OUT_DIR/n<COUNT>.csv (one bonnie++ CSV line per run, in run order), OUT_DIR/runs.tsv (per run: when, how
# long, the load average before it) and OUT_DIR/environment.txt.
set -eu

OUT=$(cd "${1:-$(dirname "$0")}" && pwd)
RUNS=${RUNS:-12}
COUNTS=${COUNTS:-80 64}
# -s 0: no block I/O (a run takes a few seconds); the file tests only, one directory, files of size 0.
BONNIE_OPTS="-u root -s 0 -q"

WORK=$(mktemp -d /tmp/bonnie-aa-censored.XXXXXX)
cleanup() {
    set +e
    mountpoint -q "$WORK/mnt" && umount "$WORK/mnt"
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

mkdir "$WORK/mnt"
mount -t tmpfs -o size=512m tmpfs "$WORK/mnt"

{
    echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "bonnie++: $(dpkg-query -W -f='${Package} ${Version}' bonnie++ 2>/dev/null || echo unknown)"
    echo "command: bonnie++ $BONNIE_OPTS -n COUNT -m aa-nCOUNT -d MOUNTPOINT   (COUNT in: $COUNTS; $RUNS runs each, one after another)"
    echo "kernel: $(uname -srm)"
    echo "cpus: $(nproc)   $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
    echo "ram: $(awk '/MemTotal/ {printf "%d MiB", $2 / 1024}' /proc/meminfo)"
    echo "mount tmpfs: $(findmnt -n -o SOURCE,FSTYPE,OPTIONS "$WORK/mnt")"
    echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$OUT/environment.txt"

printf 'setup\trun\tstart_utc\tseconds\tload1_before\n' >"$OUT/runs.tsv"
for count in $COUNTS; do
    : >"$OUT/n$count.csv"
    run=1
    while [ "$run" -le "$RUNS" ]; do
        echo "aa-n$count run $run of $RUNS" >&2
        load=$(cut -d' ' -f1 /proc/loadavg)
        start=$(date -u +%Y-%m-%dT%H:%M:%SZ)
        t0=$(date +%s)
        # shellcheck disable=SC2086  # BONNIE_OPTS is a list of options
        if ! bonnie++ $BONNIE_OPTS -n "$count" -m "aa-n$count" -d "$WORK/mnt" >>"$OUT/n$count.csv" 2>"$WORK/report"; then
            cat "$WORK/report" >&2
            exit 1
        fi
        printf 'n%s\t%s\t%s\t%s\t%s\n' "$count" "$run" "$start" "$(($(date +%s) - t0))" "$load" >>"$OUT/runs.tsv"
        run=$((run + 1))
    done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/environment.txt"

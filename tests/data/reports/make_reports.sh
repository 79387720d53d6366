#!/bin/sh
# Remake the real-*.txt reports: what Debian's bonnie++ 2.00a prints on stdout (the text report, then its CSV
# line) in several configurations. tests/ingest/test_report_text.py converts each report and compares the result with
# that CSV line. Needs root (mounts): sudo sh tests/data/reports/make_reports.sh
# The files were made once and are kept; the tests never run bonnie++ for them.
set -eu

OUT=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d /tmp/bonnie-reports.XXXXXX)
LOOP=""
cleanup() {
    for dir in "$WORK/tmpfs" "$WORK/ext4"; do mountpoint -q "$dir" && umount "$dir"; done
    [ -n "$LOOP" ] && losetup -d "$LOOP"
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

mkdir "$WORK/tmpfs" "$WORK/ext4"
mount -t tmpfs -o size=2g tmpfs "$WORK/tmpfs"
# ext4 on a loop device, for file tests slow enough to be measured (their rates are what 2.00a's report garbles).
fallocate -l 1G "$WORK/ext4.img"
LOOP=$(losetup -f --show --direct-io=on "$WORK/ext4.img")
mkfs.ext4 -q -F "$LOOP"
mount "$LOOP" "$WORK/ext4"

report() {  # report NAME DIR OPTIONS...: stdout (report, then CSV line) to real-NAME.txt
    name=$1
    dir=$2
    shift 2
    echo "$name" >&2
    bonnie++ -u root -r 128 -d "$dir" -m "$name" "$@" >"$OUT/real-$name.txt" 2>/dev/null
}

report default "$WORK/tmpfs" -s 256M -n 4
report no-per-char "$WORK/tmpfs" -s 256M -n 4 -f
report no-file-tests "$WORK/tmpfs" -s 256M -n 0
report no-io-tests "$WORK/tmpfs" -s 0 -n 4
report sizes-and-dirs "$WORK/tmpfs" -s 0 -n 4:4096:1024:4
report max-size-only "$WORK/tmpfs" -s 0 -n 4:4096
report hard-links "$WORK/tmpfs" -s 0 -n 4:-1
report chunk-seeks-procs "$WORK/tmpfs" -s 256M:4k:2000:3 -n 1
report concurrency "$WORK/tmpfs" -s 256M -n 1 -c 4
report gigabyte "$WORK/tmpfs" -s 1G -n 1 -f
report fsync-ext4 "$WORK/ext4" -s 256M -n 1 -b
report measured-files-ext4 "$WORK/ext4" -s 0 -n 48
report "a very long machine name.example.org" "$WORK/tmpfs" -s 256M -n 1 -f
mv "$OUT/real-a very long machine name.example.org.txt" "$OUT/real-long-name.txt"
# Two runs of one machine with the same options: different runs that share a name and a size.
for run in 1 2; do
    bonnie++ -u root -r 128 -d "$WORK/tmpfs" -m lab1 -s 256M -n 4 >"$OUT/real-lab1-run$run.txt" 2>/dev/null
done

# bonnieboard's own runner titles its report "Version 0.1.0" and prints real file-test rates.
RUNNER="$OUT/../../../runner/bonnieboard-runner"
if [ -x "$RUNNER" ]; then
    "$RUNNER" -d "$WORK/tmpfs" -s 64 -r 16 -n 2 -m runner-probe >"$OUT/runner-0.1.0.txt" 2>/dev/null
fi

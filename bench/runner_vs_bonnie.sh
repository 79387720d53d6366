#!/bin/bash
# runner_vs_bonnie.sh -- run Debian's bonnie++ 2.00a and bonnieboard-runner
# alternately ROUNDS times each with the same parameters, on a tmpfs mounted
# for the purpose and on the disk under the temp dir, and write the medians
# (and spread) of runner/bonnie++ throughput and CPU seconds per unit of work
# into bench/RESULTS.md under "## Runner vs bonnie++ 2.00a".
#
# usage: sudo bench/runner_vs_bonnie.sh [ROUNDS] [-- extra bonnie++ options]
#   env: PARAMS (default "-s 512 -r 256 -n 4"), TARGETS (default "tmpfs disk"),
#        TMPFS_SIZE (default 6g), TMPDIR, NO_TMPFS=1, RESULTS=path,
#        PIN_CPU=N (run every tool under `taskset -c N`, one core for all of them),
#        NOSAMPLE=1 (also run the runner built without evidence sampling, `make -C runner nosample`,
#        as a third tool: runner/no-sampling isolates what the samples cost),
#        SECTION (the RESULTS.md heading to write, default "Runner vs bonnie++ 2.00a")
# Each round runs the tools in a rotated order (bonnie++ first in round 1, the runner in round 2, ...),
# so drift in the machine's load hits all of them. The load average before and after is recorded.
# needs: root (mount, bonnie++ -u root), bonnie++, python3, make, cc, libcurl dev files.
set -euo pipefail

ROUNDS=${1:-5}
PARAMS=${PARAMS:-"-s 512 -r 256 -n 4"}
HERE=$(cd "$(dirname "$0")/.." && pwd)
RESULTS=${RESULTS:-$HERE/bench/RESULTS.md}
RUNNER=$HERE/runner/bonnieboard-runner
BONNIE=$(command -v bonnie++ || echo /usr/sbin/bonnie++)
[ -x "$BONNIE" ] || { echo "bonnie++ missing: apt-get install -y bonnie++" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "run as root (tmpfs mount, bonnie++ -u root)" >&2; exit 1; }
NOSAMPLE_BIN=$HERE/runner/bonnieboard-runner-nosample
make -s -C "$HERE/runner" all ${NOSAMPLE:+nosample}
PIN=()
[ -n "${PIN_CPU:-}" ] && PIN=(taskset -c "$PIN_CPU")
TOOLS="bonnie runner${NOSAMPLE:+ nosample}"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)

WORK=$(mktemp -d "${TMPDIR:-/tmp}/runner-bench.XXXXXX")
TMPFS=$WORK/tmpfs
DISK=$WORK/disk
OUT=$WORK/out
mkdir -p "$TMPFS" "$DISK" "$OUT"
cleanup() {
    mountpoint -q "$TMPFS" && umount "$TMPFS"
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM  # run the EXIT trap (umount) when interrupted

TARGETS=${TARGETS:-"tmpfs disk"}
[ -n "${NO_TMPFS:-}" ] && TARGETS=${TARGETS//tmpfs/}
case " $TARGETS " in
*" tmpfs "*) mount -t tmpfs -o size="${TMPFS_SIZE:-6g}",mode=0755 bench-tmpfs "$TMPFS" ;;
esac

SEED=$$
for target in $TARGETS; do
    dir=$DISK
    [ "$target" = tmpfs ] && dir=$TMPFS
    for round in $(seq 1 "$ROUNDS"); do
        # rotate which tool goes first so drift in the machine hits all of them
        read -r -a tools <<<"$TOOLS"
        shift_by=$(((round - 1) % ${#tools[@]}))
        order=("${tools[@]:$shift_by}" "${tools[@]:0:$shift_by}")
        for tool in "${order[@]}"; do
            echo "== $target round $round: $tool" >&2
            sync
            out="$OUT/$target.$tool.$round"
            case $tool in
            bonnie)
                # shellcheck disable=SC2086
                "${PIN[@]}" "$BONNIE" -d "$dir" -u root $PARAMS -q -z "$SEED" 2>/dev/null | tail -1 >"$out.csv" ;;
            runner)
                # shellcheck disable=SC2086
                "${PIN[@]}" "$RUNNER" -d "$dir" $PARAMS -q -z "$SEED" --json "$out.json" 2>/dev/null |
                    tail -1 >"$out.csv" ;;
            nosample)
                # shellcheck disable=SC2086
                "${PIN[@]}" "$NOSAMPLE_BIN" -d "$dir" $PARAMS -q -z "$SEED" 2>/dev/null | tail -1 >"$out.csv" ;;
            esac
        done
    done
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$OUT" "$RESULTS" "$ROUNDS" "$PARAMS" "$TARGETS" "$TOOLS" "${PIN_CPU:-}" "$LOAD_BEFORE" "$LOAD_AFTER" \
    "${SECTION:-Runner vs bonnie++ 2.00a}" <<'PY'
import glob, os, re, statistics, sys, platform, datetime
out, results, rounds, params, targets = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5].split()
tools, pin, load_before, load_after, title = sys.argv[6].split(), sys.argv[7], sys.argv[8], sys.argv[9], sys.argv[10]
TESTS = ["putc", "put_block", "rewrite", "getc", "get_block", "seeks",
         "seq_create", "seq_stat", "seq_del", "ran_create", "ran_stat", "ran_del"]
COLS = {t: (9 + 2 * i if i < 6 else 26 + 2 * (i - 6)) for i, t in enumerate(TESTS)}
UNIT = {t: ("KiB/s" if i < 5 else "seeks/s" if i == 5 else "files/s") for i, t in enumerate(TESTS)}

def load(target, tool):
    rows = []
    for r in range(1, rounds + 1):
        f = open(os.path.join(out, f"{target}.{tool}.{r}.csv")).read().strip().split(",")
        assert len(f) == 50, (target, tool, r, len(f))
        rows.append(f)
    return rows

def num(cell):
    try:
        return float(cell)
    except ValueError:
        return None

def spread(values):
    return f"{min(values):.3g}–{max(values):.3g}"

def ratio_cell(num_rows, den_rows, c):
    """median (min–max) over rounds of num/den for the same round, or None when either was +++++."""
    nv, dv = [num(x[c]) for x in num_rows], [num(x[c]) for x in den_rows]
    if any(v is None for v in nv + dv):
        return None
    ratios = [a / b for a, b in zip(nv, dv)]
    return statistics.median(ratios), f"{statistics.median(ratios):.3f} ({spread(ratios)})"

pin_text = f"every tool pinned to CPU {pin} (`taskset -c {pin}`)" if pin else "not pinned"
env = (f"PIN_CPU={pin} " if pin else "") + ("NOSAMPLE=1 " if "nosample" in tools else "")
lines = [f"## {title}", ""]
lines.append(f"Measured {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC on {platform.node()} "
             f"({os.cpu_count()} CPUs, kernel {platform.release()}), {rounds} rounds per tool, order rotated "
             f"each round, same seed, {pin_text}; load average (1, 5, 15 min) {load_before} before and "
             f"{load_after} after. Command: `sudo {env}PARAMS='{params}' bench/runner_vs_bonnie.sh {rounds}`; "
             f"tmpfs = a tmpfs mounted under the temp dir for the purpose, disk = the temp dir's own filesystem.")
lines.append("")
lines.append("Throughput ratio = median over rounds of runner/bonnie++ for the same round (min–max over "
             "rounds); CPU/work = (%CPU/100)/rate, i.e. CPU seconds per KiB, seek or file, from the CSV of "
             "each tool (the same formula for both). Only tests that no tool reported as `+++++` in any "
             "round are compared. Target (issue #12): throughput ratio 0.95–1.05."
             + (" `no-sampling` = the runner built with `make -C runner nosample` (no evidence samples); "
                "runner/no-sampling is what the samples cost." if "nosample" in tools else ""))
lines.append("")
for target in targets:
    b, r = load(target, "bonnie"), load(target, "runner")
    ns = load(target, "nosample") if "nosample" in tools else None
    lines.append(f"### {target}")
    lines.append("")
    head = ("| test | unit | bonnie++ median (min–max) | runner median (min–max) | runner/bonnie++ throughput, "
            "median (min–max) | CPU/work runner/bonnie++, median |")
    rule = "|---|---|---|---|---|---|"
    if ns:
        head += " runner/no-sampling throughput, median (min–max) | no-sampling/bonnie++ throughput, median |"
        rule += "---|---|"
    lines += [head + " verdict |", rule + "---|"]
    skipped = []
    for t in TESTS:
        c = COLS[t]
        cell = ratio_cell(r, b, c)
        extra = ""
        if ns:
            vs_ns, ns_vs_b = ratio_cell(r, ns, c), ratio_cell(ns, b, c)
            if vs_ns is None or ns_vs_b is None:
                cell = None
            else:
                extra = f" {vs_ns[1]} | {ns_vs_b[0]:.3f} |"
        if cell is None:
            skipped.append(t)
            continue
        bv, rv = [num(x[c]) for x in b], [num(x[c]) for x in r]
        bc, rc = [num(x[c + 1]) for x in b], [num(x[c + 1]) for x in r]
        cpu_b = statistics.median(cc / 100 / vv for cc, vv in zip(bc, bv))
        cpu_r = statistics.median(cc / 100 / vv for cc, vv in zip(rc, rv))
        cpu_ratio = cpu_r / cpu_b if cpu_b else float("nan")
        verdict = "within 0.95–1.05" if 0.95 <= cell[0] <= 1.05 else "outside 0.95–1.05"
        lines.append(f"| {t} | {UNIT[t]} | {statistics.median(bv):.6g} ({spread(bv)}) | "
                     f"{statistics.median(rv):.6g} ({spread(rv)}) | {cell[1]} | {cpu_ratio:.3f} |{extra} {verdict} |")
    lines.append("")
    if skipped:
        lines.append(f"Not compared (`+++++` in at least one round of some tool): {', '.join(skipped)}.")
        lines.append("")

section = "\n".join(lines) + "\n"
try:
    text = open(results).read()
except FileNotFoundError:
    text = "# Benchmark results\n\n"
m = re.search(r"^## " + re.escape(title) + r"\n.*?(?=^## |\Z)", text, re.M | re.S)
if m:
    notes = re.search(r"^### Notes\n.*", m.group(0), re.M | re.S)  # hand-written notes survive a re-run
    if notes:
        section += "\n" + notes.group(0).rstrip("\n") + "\n"
    text = text[:m.start()] + section + ("\n" if text[m.end():] else "") + text[m.end():]
else:
    text = text.rstrip("\n") + "\n\n" + section
open(results, "w").write(text)
print(section)
PY

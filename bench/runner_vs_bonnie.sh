#!/bin/bash
# runner_vs_bonnie.sh -- run Debian's bonnie++ 2.00a and bonnieboard-runner
# alternately ROUNDS times each with the same parameters, on a tmpfs mounted
# for the purpose and on the disk under the temp dir, and write the medians
# (and spread) of runner/bonnie++ throughput and CPU seconds per unit of work
# into bench/RESULTS.md under "## Runner vs bonnie++ 2.00a".
#
# usage: sudo bench/runner_vs_bonnie.sh [ROUNDS] [-- extra bonnie++ options]
#   env: PARAMS (default "-s 512 -r 256 -n 4"), TARGETS (default "tmpfs disk"),
#        TMPFS_SIZE (default 6g), TMPDIR, NO_TMPFS=1, RESULTS=path
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
make -s -C "$HERE/runner"

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
        # alternate which tool goes first so drift in the machine hits both
        if [ $((round % 2)) -eq 1 ]; then order="bonnie runner"; else order="runner bonnie"; fi
        for tool in $order; do
            echo "== $target round $round: $tool" >&2
            sync
            if [ "$tool" = bonnie ]; then
                # shellcheck disable=SC2086
                "$BONNIE" -d "$dir" -u root $PARAMS -q -z "$SEED" 2>/dev/null | tail -1 \
                    >"$OUT/$target.$tool.$round.csv"
            else
                # shellcheck disable=SC2086
                "$RUNNER" -d "$dir" $PARAMS -q -z "$SEED" --json "$OUT/$target.$tool.$round.json" \
                    2>/dev/null | tail -1 >"$OUT/$target.$tool.$round.csv"
            fi
        done
    done
done

python3 - "$OUT" "$RESULTS" "$ROUNDS" "$PARAMS" "$TARGETS" <<'PY'
import glob, os, re, statistics, sys, platform, datetime
out, results, rounds, params, targets = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5].split()
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

lines = ["## Runner vs bonnie++ 2.00a", ""]
lines.append(f"Measured {datetime.date.today().isoformat()} on {platform.node()} "
             f"({os.cpu_count()} CPUs, kernel {platform.release()}), {rounds} rounds per tool, "
             f"alternating, same seed. Command: `sudo PARAMS='{params}' bench/runner_vs_bonnie.sh {rounds}`; "
             f"tmpfs = a tmpfs mounted under the temp dir for the purpose, disk = the temp "
             f"dir's own filesystem.")
lines.append("")
lines.append("Throughput ratio = median over rounds of runner/bonnie++ for the same round; CPU/work = "
             "(%CPU/100)/rate, i.e. CPU seconds per KiB, seek or file, from the CSV of each tool "
             "(the same formula for both). Only tests that neither tool reported as `+++++` in any round "
             "are compared. Target: throughput 0.9–1.1, CPU/work within 5 %.")
lines.append("")
for target in targets:
    b, r = load(target, "bonnie"), load(target, "runner")
    lines.append(f"### {target}")
    lines.append("")
    lines.append("| test | unit | bonnie++ median (min–max) | runner median (min–max) | runner/bonnie++ throughput, median (min–max) | CPU/work runner/bonnie++, median | verdict |")
    lines.append("|---|---|---|---|---|---|---|")
    skipped = []
    for t in TESTS:
        c = COLS[t]
        bv = [num(x[c]) for x in b]
        rv = [num(x[c]) for x in r]
        if any(v is None for v in bv + rv):
            skipped.append(t)
            continue
        bc = [num(x[c + 1]) for x in b]
        rc = [num(x[c + 1]) for x in r]
        ratios = [rr / bb for rr, bb in zip(rv, bv)]
        cpu_b = [cc / 100 / vv for cc, vv in zip(bc, bv)]
        cpu_r = [cc / 100 / vv for cc, vv in zip(rc, rv)]
        cpu_ratio = statistics.median(cpu_r) / statistics.median(cpu_b) if statistics.median(cpu_b) else float("nan")
        med = statistics.median(ratios)
        ok = 0.9 <= med <= 1.1 and abs(cpu_ratio - 1) <= 0.05
        verdict = "meets target" if ok else ("throughput off" if not 0.9 <= med <= 1.1 else "CPU off")
        lines.append(f"| {t} | {UNIT[t]} | {statistics.median(bv):.6g} ({spread(bv)}) | "
                     f"{statistics.median(rv):.6g} ({spread(rv)}) | {med:.3f} ({spread(ratios)}) | "
                     f"{cpu_ratio:.3f} | {verdict} |")
    lines.append("")
    if skipped:
        lines.append(f"Not compared (`+++++` in at least one round of either tool): {', '.join(skipped)}.")
        lines.append("")

section = "\n".join(lines) + "\n"
try:
    text = open(results).read()
except FileNotFoundError:
    text = "# Benchmark results\n\n"
m = re.search(r"^## Runner vs bonnie\+\+ 2\.00a\n.*?(?=^## |\Z)", text, re.M | re.S)
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

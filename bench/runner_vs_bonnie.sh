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
#        SECTION (the RESULTS.md heading to write, default "Runner vs bonnie++ 2.00a"),
#        KEEP_RAW=dir (keep every round's CSV line and JSON document there)
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
    [ -n "${KEEP_RAW:-}" ] && mkdir -p "$KEEP_RAW" && cp -r "$OUT"/. "$KEEP_RAW"/
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

def per_round(num_rows, den_rows, c, cpu=False):
    """num/den per round for column c (throughput), or of CPU seconds per unit of work (cpu=True);
    None when some round was +++++ (or had 0 %CPU)."""
    out = []
    for a, b in zip(num_rows, den_rows):
        va, vb = num(a[c]), num(b[c])
        if va is None or vb is None:
            return None
        if cpu:
            ca, cb = num(a[c + 1]), num(b[c + 1])
            if not ca or not cb:
                return None
            out.append((ca / va) / (cb / vb))
        else:
            out.append(va / vb)
    return out

def med(values):
    return f"{statistics.median(values):.3f} ({spread(values)})"

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
             "rounds); best round = the runner's highest rate / bonnie++'s highest (other load only slows a "
             "round down). CPU/work = (%CPU/100)/rate, i.e. CPU seconds per KiB, seek or file, from the CSV "
             "of each tool (the same formula for both), as a ratio per round: waiting for a CPU does not count "
             "in it. Only tests that no tool reported as `+++++` in any round are compared. Target (issue "
             "#12): throughput ratio 0.95–1.05."
             + (" `no-sampling` = the runner built with `make -C runner nosample`: its timed code is the "
                "runner's instruction for instruction (bench/runner_instructions.sh), so runner/no-sampling "
                "shows what the samples cost plus this measurement's own noise." if "nosample" in tools else ""))
lines.append("")
for target in targets:
    b, r = load(target, "bonnie"), load(target, "runner")
    ns = load(target, "nosample") if "nosample" in tools else None
    lines.append(f"### {target}")
    lines.append("")
    head = ("| test | unit | bonnie++ median (min–max) | runner median (min–max) | throughput runner/bonnie++, "
            "median (min–max) | best round runner/bonnie++ | CPU/work runner/bonnie++, median (min–max) |")
    rule = "|---|---|---|---|---|---|---|"
    if ns:
        head += " throughput runner/no-sampling, median (min–max) | CPU/work runner/no-sampling, median (min–max) |"
        rule += "---|---|"
    lines += [head + " verdict |", rule + "---|"]
    skipped = []
    for t in TESTS:
        c = COLS[t]
        cells = [per_round(r, b, c), per_round(r, b, c, cpu=True)]
        if ns:
            cells += [per_round(r, ns, c), per_round(r, ns, c, cpu=True)]
        if any(x is None for x in cells):
            skipped.append(t)
            continue
        bv, rv = [num(x[c]) for x in b], [num(x[c]) for x in r]
        verdict = "within 0.95–1.05" if 0.95 <= statistics.median(cells[0]) <= 1.05 else "outside 0.95–1.05"
        lines.append(f"| {t} | {UNIT[t]} | {statistics.median(bv):.6g} ({spread(bv)}) | "
                     f"{statistics.median(rv):.6g} ({spread(rv)}) | {med(cells[0])} | {max(rv) / max(bv):.3f} | "
                     + " | ".join(med(x) for x in cells[1:]) + f" | {verdict} |")
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

#!/bin/bash
# runner_instructions.sh -- user-space instructions per test for bonnie++ 2.00a, the runner, and the
# runner built without its evidence sampling (make -C runner nosample), counted by valgrind's callgrind
# on one small run of each on a tmpfs. Instruction counts do not depend on the machine's load, so this
# is the repeatable half of issue #12's sampling-overhead check (bench/runner_vs_bonnie.sh is the
# wall-clock half). Prints a markdown table for bench/RESULTS.md.
#
# Timed region of a test = from the return of its clock's start to the call that stops it:
#   bonnie++: BonTimer::start() .. BonTimer::stop_and_record(); runner: timer_start() .. timer_stop().
# Seeks have no such pair in bonnie++ (its seeker threads time themselves), so the seek row counts the
# seekers' own work instead, per seek: bonnie++'s CFileOp::action() (the seeker threads' function) and
# the runner's seeker processes, each counted from fork() to _exit() (callgrind writes a file per process;
# the parent dumps its counts just before each fork, so a child starts from zero).
# Kernel work is not counted (callgrind sees user space only); the system calls themselves are the
# same, call for call (tests/runner/test_runner.py::test_system_calls_match_bonnie).
#
# usage: sudo bench/runner_instructions.sh
#   env: PARAMS (default "-s 16:8192:4000 -r 0 -n 1 -f1"), BONNIE (an unstripped bonnie++ 2.00a; default:
#        built here from Debian's source package with debian/rules' flags), TMPDIR
# needs: root (tmpfs mount, bonnie++ -u root), valgrind, deb-src lines for apt-get source, g++, make.
set -euo pipefail

PARAMS=${PARAMS:-"-s 16:8192:4000 -r 0 -n 1 -f1"}
HERE=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" -eq 0 ] || { echo "run as root (tmpfs mount, bonnie++ -u root)" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "valgrind missing: apt-get install -y valgrind" >&2; exit 1; }
make -s -C "$HERE/runner" all nosample

WORK=$(mktemp -d "${TMPDIR:-/tmp}/runner-instr.XXXXXX")
TMPFS=$WORK/tmpfs
mkdir -p "$TMPFS" "$WORK/cg"
cleanup() {
    mountpoint -q "$TMPFS" && umount "$TMPFS"
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mount -t tmpfs -o size=1g,mode=0755 bench-instr "$TMPFS"

if [ -z "${BONNIE:-}" ]; then
    # Debian's binary is stripped (callgrind needs the function names): build the same source with the
    # flags debian/rules gives (MORECFLAGS=-std=c++11 -g on top of the Makefile's -O2 -DNDEBUG).
    (cd "$WORK" && apt-get source -qq bonnie++ >/dev/null 2>&1) ||
        { echo "apt-get source bonnie++ failed: add deb-src to /etc/apt/sources.list.d/debian.sources" >&2; exit 1; }
    src=$(echo "$WORK"/bonnie++-*/)
    (cd "$src" && ./configure >/dev/null && make -s MORECFLAGS='-std=c++11 -g' bonnie++ >/dev/null 2>&1)
    BONNIE=$src/bonnie++
    echo "built $BONNIE; .text bytes: $(size -A "$BONNIE" | awk '$1==".text"{print $2}')," \
        "Debian's /usr/sbin/bonnie++: $(size -A /usr/sbin/bonnie++ 2>/dev/null | awk '$1==".text"{print $2}')" >&2
fi

cg() {  # cg NAME [valgrind options] -- PROGRAM ARGS
    local name=$1
    shift
    local opts=()
    while [ "$1" != "--" ]; do opts+=("$1"); shift; done
    shift
    valgrind -q --tool=callgrind --callgrind-out-file="$WORK/cg/$name.%p" "${opts[@]}" "$@" >/dev/null 2>&1
}
# shellcheck disable=SC2086
cg bonnie --dump-after='BonTimer::start*' --dump-before='BonTimer::stop_and_record*' -- \
    "$BONNIE" -d "$TMPFS" -u root $PARAMS -q -z 7
# shellcheck disable=SC2086
cg runner --dump-after=timer_start --dump-before=timer_stop --dump-before=fork -- \
    "$HERE/runner/bonnieboard-runner" -d "$TMPFS" $PARAMS -q -z 7
# shellcheck disable=SC2086
cg nosample --dump-after=timer_start --dump-before=timer_stop --dump-before=fork -- \
    "$HERE/runner/bonnieboard-runner-nosample" -d "$TMPFS" $PARAMS -q -z 7
# shellcheck disable=SC2086
cg bonnie-seek --collect-atstart=no '--toggle-collect=CFileOp::action*' -- \
    "$BONNIE" -d "$TMPFS" -u root $PARAMS -n 0 -q -z 7

python3 - "$WORK/cg" "$PARAMS" <<'PY'
import glob, os, re, sys
cgdir, params = sys.argv[1], sys.argv[2]
TIMED = ["putc", "put_block", "rewrite", "getc", "get_block",
         "seq_create", "seq_stat", "seq_del", "ran_create", "ran_stat", "ran_del"]
m = re.search(r"-s\s*\S*?:\S*?:(\d+)(k?)", params)
seeks = (int(m.group(1)) * (1024 if m.group(2) else 1)) if m else 8192

def dumps(name):
    """(trigger, instructions) of every dump of the main process (the one with numbered parts), in order."""
    parts = {}
    for f in glob.glob(os.path.join(cgdir, name + ".*")):
        fields = os.path.basename(f)[len(name) + 1:].split(".")
        parts.setdefault(fields[0], []).append((int(fields[1]) if len(fields) > 1 else 1 << 30, f))
    main = max(parts.values(), key=len)
    out = []
    for _, f in sorted(main):
        text = open(f).read()
        trig = re.search(r"^desc: Trigger: (.*)$", text, re.M).group(1)
        out.append((trig, int(re.search(r"^(?:summary|totals): (\d+)", text, re.M).group(1))))
    return out

def timed(name):
    d = dumps(name)
    t = [ir for trig, ir in d if "timer_stop" in trig or "stop_and_record" in trig]
    assert len(t) == len(TIMED), (name, len(t))
    return dict(zip(TIMED, t)), sum(ir for _, ir in d) - sum(t)

def total(f):
    return int(re.search(r"^(?:summary|totals): (\d+)", open(f).read(), re.M).group(1))

def children_total(name):
    """The instructions of the forked processes (the runner's seekers): files of pids without parts."""
    pids = {}
    for f in glob.glob(os.path.join(cgdir, name + ".*")):
        pids.setdefault(os.path.basename(f)[len(name) + 1:].split(".")[0], []).append(f)
    return sum(total(fs[0]) for fs in pids.values() if len(fs) == 1)

b, b_rest = timed("bonnie")
r, r_rest = timed("runner")
n, n_rest = timed("nosample")
print(f"Command: `sudo PARAMS='{params}' bench/runner_instructions.sh` (valgrind --tool=callgrind, user-space "
      "instructions; a tmpfs; same seed)\n")
print("| test | unit of work | bonnie++ instr. per unit | runner instr. per unit | runner/bonnie++ | "
      "runner without sampling, per unit | with/without sampling |")
print("|---|---|---|---|---|---|---|")
m_size = re.search(r"-f\s*(\d+)", params)
char_bytes = int(m_size.group(1)) << 20 if m_size else 3 << 20
file_mib = int(re.search(r"-s\s*(\d+)", params).group(1))
m_n = re.search(r"-n\s*(\d+)", params)
files = int(m_n.group(1)) * 1024 if m_n else 16 * 1024
work = {"putc": (char_bytes, "byte"), "getc": (char_bytes, "byte"), "put_block": (file_mib << 20, "byte"),
        "rewrite": (file_mib << 20, "byte"), "get_block": (file_mib << 20, "byte")}
for t in TIMED:
    units, unit = work.get(t, (files, "file"))
    print(f"| {t} | {unit} | {b[t] / units:.4g} | {r[t] / units:.4g} | {r[t] / b[t]:.3f} | "
          f"{n[t] / units:.4g} | {r[t] / n[t]:.4f} |")
bs = sum(total(f) for f in glob.glob(os.path.join(cgdir, "bonnie-seek.*")))
rs, ns = children_total("runner"), children_total("nosample")
print(f"| seeks (seekers' own work) | seek | {bs / seeks:.4g} | {rs / seeks:.4g} | {rs / bs:.3f} | "
      f"{ns / seeks:.4g} | {rs / ns:.4f} |")
print()
print(f"Outside the timed regions (start-up, file set-up, reports, and the runner's samples): bonnie++ "
      f"{b_rest:,}, runner {r_rest:,}, runner without sampling {n_rest:,} instructions; the samples cost "
      f"{r_rest - n_rest:,} instructions in all, {(r_rest - n_rest) / 12:,.0f} per test (two samples each).")
PY

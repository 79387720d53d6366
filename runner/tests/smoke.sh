#!/bin/sh
# smoke.sh BINARY -- a tiny real run in a fresh temp dir: exit 0, a 50-field
# CSV line after a 50-name header (-x 2), a JSON document, nothing left in
# the scratch dir; a failed post exits 4 and spools; SIGINT cleans up.
set -eu
BIN=$1
case $BIN in /*) ;; *) BIN=$(pwd)/$BIN ;; esac
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "smoke: FAILED: $*" >&2; exit 1; }
mkdir "$TMP/scratch"

"$BIN" -d "$TMP/scratch" -s 8 -r 0 -n 1:2k:1k:2 -f1 -z 7 -x 2 -q -m smoke \
    --json "$TMP/doc.json" >"$TMP/out.csv" 2>"$TMP/err.txt" || fail "exit $? $(cat "$TMP/err.txt")"
[ "$(wc -l <"$TMP/out.csv")" -eq 3 ] || fail "expected header + 2 lines: $(cat "$TMP/out.csv")"
head -1 "$TMP/out.csv" | grep -q '^format_version,bonnie_version,' || fail "no header"
awk -F, '{ if (NF != 50) { print "line " NR " has " NF " fields"; bad = 1 } } END { exit bad }' \
    "$TMP/out.csv" || fail "field count"
sed -n 2p "$TMP/out.csv" | grep -q '^1\.98,bonnieboard-[0-9.]*,smoke,1,7,8M,,8192,5,' || fail "prefix: $(sed -n 2p "$TMP/out.csv")"
[ -z "$(ls -A "$TMP/scratch")" ] || fail "files left in the scratch dir: $(ls -A "$TMP/scratch")"
grep -q '"schema":"bonnieboard-runner/1"' "$TMP/doc.json" || fail "no JSON document"
grep -q '"write":1048576' "$TMP/doc.json" || fail "putc did not issue 1048576 one-byte writes"

# a post to a closed port fails with exit 4 and keeps the body in the spool
set +e
"$BIN" -d "$TMP/scratch" -s 0 -n 1 -r 0 -q --post http://127.0.0.1:9 --tag k=v \
    --spool "$TMP/spool.json" >/dev/null 2>"$TMP/post.txt"
rc=$?
set -e
[ "$rc" -eq 4 ] || fail "post failure exit $rc, expected 4"
grep -q '"csv":"1.98,' "$TMP/spool.json" || fail "spool file lacks the CSV"
grep -q 'curl -X POST' "$TMP/post.txt" || fail "no resend instruction"

# SIGINT in the middle: exit 3, nothing left behind
"$BIN" -d "$TMP/scratch" -s 64 -r 0 -n 16 -f64 -q >/dev/null 2>"$TMP/int.txt" &
pid=$!
sleep 1
kill -INT "$pid"
set +e
wait "$pid"
rc=$?
set -e
[ "$rc" -eq 3 ] || fail "interrupted run exit $rc, expected 3"
[ -z "$(ls -A "$TMP/scratch")" ] || fail "files left after SIGINT: $(ls -A "$TMP/scratch")"

# a closed output pipe (`| head`) stops the run the same way
"$BIN" -d "$TMP/scratch" -s 0 -n 4 -r 0 2>&1 | head -1 >/dev/null
[ -z "$(ls -A "$TMP/scratch")" ] || fail "files left after SIGPIPE: $(ls -A "$TMP/scratch")"

# usage errors exit 1; a missing directory is a preparation error (2)
set +e
"$BIN" -s 10 -r 1000 -d "$TMP/scratch" >/dev/null 2>&1; [ $? -eq 1 ] || fail "2x RAM refusal not exit 1"
"$BIN" -d "$TMP/nonexistent" -s 1 -r 0 >/dev/null 2>&1; [ $? -eq 2 ] || fail "missing dir not exit 2"
set -e
echo "smoke: ok ($BIN)"

#!/bin/sh
# help2man.sh PROGRAM [README]: the manual page bonnieboard-runner.1, made from PROGRAM --help (the one text of
# the options, in src/options.c), PROGRAM sweep --help and README's plan and sweep exit tables (README.md beside
# this script's directory by default), on stdout. The --help text's shape: a "usage:" synopsis up to the
# first blank line; a paragraph; lists headed by a line ending in ':' whose entries are
# "  OPTION   text" (a long OPTION stands alone, its text on the lines below, indented further);
# "Exit codes: ..." and "Version: NAME-VERSION" at the end. sweep --help: a "usage:" synopsis, a blank line, a
# paragraph and "Exit codes: ...". Sections are gathered as the three texts are read and printed in a man page's
# order at the end.
set -eu
prog=$1
readme=${2:-$(dirname "$0")/../README.md}
{
    "$prog" --help
    echo "@@ sweep"
    "$prog" sweep --help
    echo "@@ readme"
    cat "$readme"
} | awk '
function roff(s) {               # escape what roff reads as its own: backslashes, a leading . or '\''
    gsub(/\\/, "\\e", s)
    gsub(/-/, "\\-", s)
    if (s ~ /^[.'\'']/) s = "\\&" s
    return s
}
function md(s) {                 # a Markdown table cell: `code` in bold
    s = roff(s)
    while (match(s, /`[^`]*`/)) s = substr(s, 1, RSTART - 1) "\\fB" substr(s, RSTART + 1, RLENGTH - 2) "\\fR" substr(s, RSTART + RLENGTH)
    return s
}
function add(section, line) { out[section] = out[section] line "\n" }
function flush() { if (text != "") { add("body", roff(text)); text = "" } }
function cells(line, parts,    n, i) {   # a table row "| a | b | c |" -> parts[1..n], trimmed
    n = split(line, parts, /[ ]*\|[ ]*/)
    for (i = 1; i < n - 1; i++) parts[i] = parts[i + 1]
    return n - 2
}
BEGIN { part = "synopsis" }
/^@@ sweep$/ { flush(); part = "sweep"; next }
/^@@ readme$/ { part = "readme"; next }

# ---- bonnieboard-runner --help ----
part == "synopsis" && /^usage: / {
    sub(/^usage: [^ ]+ /, "")
    add("synopsis", ".B bonnieboard\\-runner")
    add("synopsis", roff($0))
    next
}
part == "synopsis" && /^$/ { part = "description"; add("body", ".SH DESCRIPTION"); next }
part == "synopsis" { sub(/^ +/, ""); add("synopsis", ".br"); add("synopsis", roff($0)); next }
part == "description" && /^Exit codes: / { flush(); sub(/^Exit codes: /, ""); add("exit", roff($0)); next }
part == "description" && /^Version: / { sub(/^Version: /, ""); version = roff($0); next }
part == "description" && /^$/ { flush(); next }
part == "description" && /^[A-Za-z].*:$/ {   # a list heading
    flush()
    if ($0 == "Environment:") { add("body", ".SH ENVIRONMENT") } else {
        if (!options_section) { add("body", ".SH OPTIONS"); options_section = 1 }
        add("body", ".SS " roff(substr($0, 1, length($0) - 1)))
    }
    next
}
part == "description" && /^  [^ ]/ {        # an entry: "  OPTION  text" or "  OPTION" alone
    flush()
    line = substr($0, 3)
    option = line; text = ""
    if (match(line, /  +/)) { option = substr(line, 1, RSTART - 1); text = substr(line, RSTART + RLENGTH) }
    add("body", ".TP")
    add("body", "\\fB" roff(option) "\\fR")
    next
}
part == "description" && /^   +/ { sub(/^ +/, ""); text = (text == "" ? $0 : text " " $0); next }  # an entry goes on
part == "description" { flush(); add("body", roff($0)); next }   # the description paragraph

# ---- bonnieboard-runner sweep --help ----
part == "sweep" && /^usage: / {
    sub(/^usage: [^ ]+ /, "")
    add("synopsis", ".PP")
    add("synopsis", ".B bonnieboard\\-runner")
    sweep_usage = $0
    next
}
part == "sweep" && /^Exit codes: / { sweep_exit = 1; next }  # README'\''s table says the same, at more length
part == "sweep" && sweep_exit { next }
part == "sweep" && /^$/ { if (!sweep_text) sweep_usage_done = 1; next }
part == "sweep" && !sweep_usage_done { sub(/^ +/, ""); sweep_usage = sweep_usage " " $0; next }
part == "sweep" { sweep_text = (sweep_text == "" ? $0 : sweep_text " " $0); next }

# ---- README.md: the plan keys and the sweep exit codes ----
part == "readme" && /^### The plan$/ { table = "plan"; next }
part == "readme" && /^\| sweep exit \|/ { table = "exit"; next }
part == "readme" && /^#/ { table = ""; next }
part == "readme" && table != "" && /^\|/ {
    n = cells($0, c)
    if (c[1] == "key" || c[1] ~ /^-+$/) next
    if (table == "plan" && n == 3) { add("plan", ".TP"); add("plan", md(c[1]) " (" md(c[2]) ")"); add("plan", md(c[3])) }
    if (table == "exit" && n == 2) { add("sweep_exit", ".TP"); add("sweep_exit", md(c[1])); add("sweep_exit", md(c[2])) }
    next
}

END {
    flush()
    print ".TH BONNIEBOARD\\-RUNNER 1 \"\" \"bonnieboard\" \"bonnieboard-runner\""
    print ".SH NAME"
    print "bonnieboard\\-runner \\- run bonnie++ 2.00a'\''s tests, record what limited each, post to a bonnieboard"
    print ".SH SYNOPSIS"
    printf "%s", out["synopsis"]
    print roff(sweep_usage)
    printf "%s", out["body"]
    print ".SH SWEEP"
    print roff(sweep_text)
    print ".PP"
    print "Each run is posted with the plan'\''s tags, its configuration'\''s, \\fBconfig=\\fINAME\\fR, \\fBround=\\fIN\\fR"
    print "and \\fBorder_seed=\\fISEED\\fR; at the end the sweep prints the board'\''s compare URL of the study."
    print "\\fB\\-\\-dry\\-run\\fR checks the plan and the device, reading only, and prints every command it would run."
    print "\\fB\\-\\-resume\\fR continues an interrupted study from \\fIPLAN\\fB.sweep/progress\\fR."
    print ".SS The plan"
    print "\\fBkey = value\\fR lines; \\fB#\\fR starts a comment; a \\fB[\\fIname\\fB]\\fR line starts a configuration."
    printf "%s", out["plan"]
    print ".SH EXIT STATUS"
    printf "%s", out["exit"]
    print ".PP"
    print "\\fBsweep\\fR:"
    printf "%s", out["sweep_exit"]
    print ".SH SEE ALSO"
    print "runner/README.md in the bonnieboard sources (the CSV columns, the JSON document, each test, the sweep);"
    print ".BR bonnie++ (8)."
    print ".PP"
    print "This page is " version "'\''s \\fB\\-\\-help\\fR and \\fBsweep \\-\\-help\\fR, with README.md'\''s plan and sweep tables."
}
'

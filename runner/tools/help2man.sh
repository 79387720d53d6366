#!/bin/sh
# help2man.sh PROGRAM: the manual page bonnieboard-runner.1, made from PROGRAM --help (the one text of
# the options, in src/options.c), on stdout. The --help text's shape: a "usage:" synopsis up to the
# first blank line; a paragraph; lists headed by a line ending in ':' whose entries are
# "  OPTION   text" (a long OPTION stands alone, its text on the lines below, indented further);
# "Exit codes: ..." and "Version: NAME-VERSION" at the end.
set -eu
prog=$1
"$prog" --help | awk '
function roff(s) {               # escape what roff reads as its own: backslashes, a leading . or '\''
    gsub(/\\/, "\\e", s)
    gsub(/-/, "\\-", s)
    if (s ~ /^[.'\'']/) s = "\\&" s
    return s
}
function flush() { if (text != "") { print roff(text); text = "" } }
BEGIN { part = "synopsis" }
part == "synopsis" && /^usage: / {
    sub(/^usage: [^ ]+ /, "")
    print ".TH BONNIEBOARD\\-RUNNER 1 \"\" \"bonnieboard\" \"bonnieboard-runner\""
    print ".SH NAME"
    print "bonnieboard\\-runner \\- run bonnie++ 2.00a'\''s tests, record what limited each, post to a bonnieboard"
    print ".SH SYNOPSIS"
    print ".B bonnieboard\\-runner"
    print roff($0)
    next
}
part == "synopsis" && /^$/ { part = "description"; print ".SH DESCRIPTION"; next }
part == "synopsis" { sub(/^ +/, ""); print ".br"; print roff($0); next }
/^Exit codes: / { flush(); part = "end"; sub(/^Exit codes: /, ""); print ".SH EXIT STATUS"; print roff($0); next }
/^Version: / {
    sub(/^Version: /, "")
    print ".SH SEE ALSO"
    print "runner/README.md in the bonnieboard sources (the CSV columns, the JSON document, each test);"
    print ".BR bonnie++ (8)."
    print ".PP"
    print "This page is " roff($0) "'\''s \\fB\\-\\-help\\fR."
    next
}
/^$/ { flush(); next }
/^[A-Za-z].*:$/ {                # a list heading
    flush()
    if ($0 == "Environment:") { print ".SH ENVIRONMENT" } else {
        if (!options_section) { print ".SH OPTIONS"; options_section = 1 }
        print ".SS " roff(substr($0, 1, length($0) - 1))
    }
    next
}
/^  [^ ]/ {                      # an entry: "  OPTION  text" or "  OPTION" alone
    flush()
    line = substr($0, 3)
    option = line; text = ""
    if (match(line, /  +/)) { option = substr(line, 1, RSTART - 1); text = substr(line, RSTART + RLENGTH) }
    print ".TP"
    print "\\fB" roff(option) "\\fR"
    next
}
/^   +/ { sub(/^ +/, ""); text = (text == "" ? $0 : text " " $0); next }   # an entry text goes on
{ flush(); print roff($0) }      # the description paragraph
END { flush() }
'

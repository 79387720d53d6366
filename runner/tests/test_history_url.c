/* test_history_url.c -- the history URL a successful post prints: the board's base URL as the user gave
 * it (a proxy's path kept, trailing slashes dropped) and the machine name percent-encoded, so that a name
 * with a space, '&', '#', '+' or UTF-8 reaches /history as the CSV line carries it. */
#include "testhelp.h"

#include "post.h"

static void check(const char *descr, const char *board, const char *machine, const char *want)
{
    struct sbuf b = {0};
    int rc = post_history_url(board, machine, &b);
    test_str_eq(descr, rc == 0 ? sbuf_str(&b) : NULL, want);
    sbuf_free(&b);
}

int main(void)
{
    check("a plain name", "http://board:8000", "nightly-loop", "http://board:8000/history?machine=nightly-loop");
    check("trailing slashes dropped", "http://board:8000//", "lab1", "http://board:8000/history?machine=lab1");
    check("a proxy's path kept", "https://tools.example/bb/", "lab1",
          "https://tools.example/bb/history?machine=lab1");
    check("unreserved characters stay", "http://b", "Az09-._~", "http://b/history?machine=Az09-._~");
    check("space, &, #, +, =, /, ?, % escaped", "http://b", "my host&x#1+2=3/4?5%",
          "http://b/history?machine=my%20host%26x%231%2B2%3D3%2F4%3F5%25");
    check("UTF-8 escaped byte by byte, upper-case hex", "http://b", "h\xc3\xb6st",
          "http://b/history?machine=h%C3%B6st");
    check("an empty name leaves the parameter empty", "http://b", "", "http://b/history?machine=");
    test_report();
    return 0;
}

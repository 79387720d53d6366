/* test_post.c -- what the runner writes where a token could leak: the post body, the spool file,
 * the resend command and the document's command_line; and the JSON writer's sticky error flag. */
#include "testhelp.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "document.h"
#include "json.h"
#include "post.h"

#define SECRET "s3cret-T0ken"

static int render_has(char **argv, int argc, const char *needle, const char *absent)
{
    struct options o;
    char err[256];
    struct system_info *sys = calloc(1, sizeof(*sys));
    struct document d;
    struct sbuf out = {0};
    options_parse(&o, argc, argv, err, sizeof(err));
    document_init(&d, argc, argv, &o, sys, "option");
    int ok = document_render(&d, &out) == 0 && strstr(sbuf_str(&out), needle) && !strstr(sbuf_str(&out), absent);
    if (!ok)
        printf("    document: %.400s\n", strstr(sbuf_str(&out), "command_line") ? strstr(sbuf_str(&out), "command_line") : "");
    document_free(&d);
    sbuf_free(&out);
    options_free(&o);
    free(sys);
    return ok;
}

int main(void)
{
    struct sbuf b = {0};

    /* the body */
    struct tag tags[2] = {{"raid", "5"}, {"fs", "x\"fs"}};
    struct post_request req = {
        .board_url = "http://b:8000//", .token = SECRET, .csv = "1.98,x\n", .document_json = "{\"a\":1}",
        .tags = tags, .tag_count = 2, .label = NULL, .spool_path = NULL, .spool_fd = -1,
    };
    test_cond("body builds", post_build_body(&req, &b) == 0);
    test_str_eq("body: csv, document as JSON, tags, null label",
                sbuf_str(&b), "{\"csv\":\"1.98,x\\n\",\"document\":{\"a\":1},\"tags\":{\"raid\":\"5\",\"fs\":\"x\\\"fs\"},\"label\":null}\n");
    test_cond("the token is not in the body", !strstr(sbuf_str(&b), SECRET));
    sbuf_free(&b);
    req.label = "L";
    post_build_body(&req, &b);
    test_cond("a label is a string", strstr(sbuf_str(&b), ",\"label\":\"L\"}") != NULL);
    sbuf_free(&b);
    post_runs_url(req.board_url, &b);
    test_str_eq("trailing slashes dropped from the board URL", sbuf_str(&b), "http://b:8000/api/runs");
    sbuf_free(&b);
    post_runs_url("https://tools.example/bb/", &b);
    test_str_eq("a board under a proxy's path keeps it", sbuf_str(&b), "https://tools.example/bb/api/runs");
    sbuf_free(&b);

    /* the resend command names the variable, never the secret */
    post_resend_command(&b, "/tmp/s.json", "http://b/api/runs", 1, NULL, NULL);
    test_str_eq("resend command with a token",
                sbuf_str(&b), "curl -X POST -H 'Content-Type: application/json' -H \"Authorization: Bearer "
                "$BONNIEBOARD_TOKEN\" --data-binary @/tmp/s.json http://b/api/runs");
    sbuf_free(&b);
    post_resend_command(&b, "s.json", "http://b/api/runs", 0, NULL, NULL);
    test_cond("resend command without a token has no Authorization", !strstr(sbuf_str(&b), "Authorization"));
    sbuf_free(&b);
    /* a token from --token-file: the command reads the same file, quoted for the shell */
    post_resend_command(&b, "s.json", "http://b/api/runs", 1, "/etc/bb/it's token", NULL);
    test_str_eq("resend command with a token file",
                sbuf_str(&b), "curl -X POST -H 'Content-Type: application/json' -H \"Authorization: Bearer "
                "$(cat '/etc/bb/it'\\''s token')\" --data-binary @s.json http://b/api/runs");
    sbuf_free(&b);

    /* the spool file: created 0600 whatever the umask, never over an existing file */
    char dir[] = "/tmp/test_post.XXXXXX", path[4200], used[4200];
    test_cond("temp dir", mkdtemp(dir) != NULL);
    snprintf(path, sizeof(path), "%s/spool.json", dir);
    mode_t old = umask(0);
    int fd = post_spool_create(path);
    umask(old);
    struct stat st;
    test_cond("spool created", fd >= 0 && fstat(fd, &st) == 0);
    test_cond("spool mode 0600 with umask 0", (st.st_mode & 07777) == 0600);
    test_cond("an existing spool file is not reused", post_spool_create(path) == -1);
    struct sbuf body = {0};
    sbuf_append(&body, "{}\n", 3);
    req.spool_fd = fd;
    req.spool_path = path;
    test_cond("spool written through the open fd", post_spool_write(&req, &body, used, sizeof(used)) == 0 &&
              strcmp(used, path) == 0 && stat(path, &st) == 0 && st.st_size == 3);
    unlink(path);
    req.spool_fd = -1;
    test_cond("spool written by name", post_spool_write(&req, &body, used, sizeof(used)) == 0 &&
              stat(path, &st) == 0 && (st.st_mode & 07777) == 0600);
    unlink(path);
    rmdir(dir);
    sbuf_free(&body);

    /* the document's command_line hides the token however it was given */
    test_cond("--token T -> --token ***",
              render_has((char *[]){"r", "--token", SECRET, "-q", NULL}, 4,
                         "\"command_line\":[\"r\",\"--token\",\"***\",\"-q\"]", SECRET));
    test_cond("--token=T -> --token=***",
              render_has((char *[]){"r", "--token=" SECRET, NULL}, 2, "\"command_line\":[\"r\",\"--token=***\"]", SECRET));
    test_cond("--token-file keeps its path",
              render_has((char *[]){"r", "--token-file", "/etc/tok", NULL}, 3, "\"--token-file\",\"/etc/tok\"", "***"));
    test_cond("secret_arg: prefixes getopt_long accepts", options_secret_arg("--tok") == OPTIONS_SECRET_NEXT &&
              options_secret_arg("--to=x") == OPTIONS_SECRET_INLINE && options_secret_arg("--tag") == OPTIONS_SECRET_NONE &&
              options_secret_arg("--token-file") == OPTIONS_SECRET_NONE && options_secret_arg("-t") == OPTIONS_SECRET_NONE &&
              options_secret_arg("--") == OPTIONS_SECRET_NONE);

    /* the JSON writer's sticky error: nesting deeper than it counts fails the whole text */
    struct json j;
    json_init(&j, &b);
    for (int i = 0; i < JSON_MAX_DEPTH + 2; i++)
        json_begin_array(&j, NULL);
    test_cond("too deep sets the sticky flag", json_failed(&j));
    json_int(&j, NULL, 1);
    test_cond("and it stays set", json_failed(&j));
    sbuf_free(&b);
    json_init(&j, &b);
    json_begin_object(&j, NULL);
    json_int(&j, "a", 1);
    json_end_object(&j);
    test_cond("a normal document does not fail", !json_failed(&j) && strcmp(sbuf_str(&b), "{\"a\":1}") == 0);
    sbuf_free(&b);

    test_report();
    return 0;
}

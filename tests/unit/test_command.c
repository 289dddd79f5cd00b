/* txbox_command_run: one command as one transaction, the one driver of the MCP server, the
 * agent loop (output captured) and txbox run/sh (own stdio, steps told to a callback).  Only
 * harmless commands run here (this test is not jailed): the refused one is a forced git
 * push in a directory that is no repository. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "txbox.h"

static char dir[200];

static int run(struct txbox_ws *ws, const char *shell, size_t cap, struct txbox_command_result *res)
{
        struct txbox_command cmd = {.shell = shell, .output_cap = cap};
        struct txbox_error err = {0};
        int r = txbox_command_run(ws, &cmd, res, &err);
        if (r < 0)
                printf("# txbox_command_run: %s\n", err.msg);
        return r;
}

/* What a step callback was told: the steps by name, and each message in order. */
struct told {
        char steps[128];
        char msgs[4][1024];
        int nmsgs;
};

static void tell(void *ctx, enum txbox_step step, const char *msg)
{
        static const char *const names[] = {"begun", "refused", "failed", "warning", "ran", "finished"};
        struct told *t = ctx;
        size_t n = strlen(t->steps);
        snprintf(t->steps + n, sizeof(t->steps) - n, "%s%s", n ? " " : "", names[step]);
        if (msg && t->nmsgs < 4)
                snprintf(t->msgs[t->nmsgs++], sizeof(t->msgs[0]), "%s", msg);
}

/* Run a command through the driver as txbox run does: own stdio (here a pipe to out),
 * steps told. */
static int drive(struct txbox_ws *ws, struct txbox_command *cmd, struct told *t, char *out, size_t size,
                 struct txbox_command_result *res)
{
        struct txbox_error err = {0};
        int p[2];

        memset(t, 0, sizeof(*t));
        out[0] = '\0';
        if (pipe2(p, O_CLOEXEC) < 0)
                return -1;
        int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
        cmd->own_stdio = true;
        cmd->opts.stdio_redirect = true;
        cmd->opts.stdio[0] = null, cmd->opts.stdio[1] = p[1], cmd->opts.stdio[2] = p[1];
        cmd->step = tell;
        cmd->ctx = t;
        int r = txbox_command_run(ws, cmd, res, &err);
        if (r < 0)
                printf("# txbox_command_run: %s\n", err.msg);
        close(p[1]);
        close(null);
        ssize_t n = read(p[0], out, size - 1);
        out[n > 0 ? n : 0] = '\0';
        close(p[0]);
        return r;
}

/* The driver's steps and messages, for a committed, a failed and a refused command and one
 * whose policy cannot be loaded; its own stdio; the record's cwd. */
static void test_steps(struct txbox_ws *ws, const char *ws_path)
{
        struct txbox_command_result res;
        struct told t;
        char out[256], sub[300], here[PATH_MAX];

        struct txbox_command ok_cmd = {.shell = "echo out; echo x >s.txt"};
        ok(drive(ws, &ok_cmd, &t, out, sizeof(out), &res) == 0, "steps: a command runs with its own stdio");
        is_str(t.steps, "begun ran finished", "steps: a committed command: begun, ran, finished");
        is_int(t.nmsgs, 0, "steps: nothing to say when it went well");
        is_str(out, "out\n", "steps: its output went to the stdio it was given");
        is_str(res.out, "", "steps: and none was captured");
        is_int(res.status, 0, "steps: status 0");
        txbox_command_result_clear(&res);

        struct txbox_command fail_cmd = {.shell = "echo y >t.txt; exit 3"};
        ok(drive(ws, &fail_cmd, &t, out, sizeof(out), &res) == 0, "steps: a failing command runs");
        is_str(t.steps, "begun ran finished", "steps: a failed command: begun, ran, finished");
        ok(t.nmsgs == 1 && strstr(t.msgs[0], "exited with status 3"), "steps: finished says why: %s",
           t.nmsgs ? t.msgs[0] : "(none)");
        is_str(res.why, t.msgs[0], "steps: the why line is what was told");
        is_int(res.status, 3, "steps: the program's status");
        txbox_command_result_clear(&res);

        char *missing[] = {"/nonexistent/prog", NULL};
        struct txbox_command no_cmd = {.argv = missing};
        ok(drive(ws, &no_cmd, &t, out, sizeof(out), &res) == 0, "steps: a missing program is decided");
        is_str(t.steps, "begun ran finished", "steps: begun, ran, finished");
        ok(t.nmsgs >= 1 && strstr(t.msgs[0], "not found"), "steps: ran says it could not be executed: %s",
           t.nmsgs ? t.msgs[0] : "(none)");
        is_int(res.status, 127, "steps: status 127");
        txbox_command_result_clear(&res);

        /* argv runs, shell is judged: the string decides, as for txbox sh -c STRING NAME. */
        char *argv[] = {"/bin/sh", "-c", "echo ran >r.txt", NULL};
        struct txbox_command deny_cmd = {.shell = "git push --force origin main", .argv = argv};
        ok(drive(ws, &deny_cmd, &t, out, sizeof(out), &res) == 0, "steps: a refused command is decided");
        is_str(t.steps, "begun refused", "steps: a refused command: begun, refused");
        ok(t.nmsgs == 1 && res.rec.rule && strstr(t.msgs[0], res.rec.rule), "steps: refused names the rule");
        is_int(res.status, 126, "steps: status 126");
        snprintf(sub, sizeof(sub), "%s/r.txt", ws_path);
        ok(access(sub, F_OK) != 0, "steps: its argv did not run");
        txbox_command_result_clear(&res);

        /* The record's cwd: where it runs, or with caller_cwd the caller's directory. */
        snprintf(sub, sizeof(sub), "%s/sub", ws_path);
        mkdir(sub, 0755);
        struct txbox_command cwd_cmd = {.shell = "pwd", .cwd = sub};
        ok(drive(ws, &cwd_cmd, &t, out, sizeof(out), &res) == 0, "cwd: a command in a subdirectory runs");
        ok(!strncmp(out, sub, strlen(sub)) && out[strlen(sub)] == '\n', "cwd: it started there: %s", out);
        is_str(res.rec.cwd, sub, "cwd: the record names it");
        txbox_command_result_clear(&res);
        cwd_cmd.caller_cwd = true;
        ok(drive(ws, &cwd_cmd, &t, out, sizeof(out), &res) == 0 && getcwd(here, sizeof(here)),
           "cwd: again, with caller_cwd");
        is_str(res.rec.cwd, here, "cwd: the record names the caller's directory");
        txbox_command_result_clear(&res);

        /* Last: the policy cannot be loaded, so the check fails (this changes the workspace). */
        snprintf(sub, sizeof(sub), "%s/../no-such-policy", ws_path);
        txbox_ws_set_policy(ws, sub);
        struct txbox_command bad_cmd = {.shell = "echo z >z.txt"};
        ok(drive(ws, &bad_cmd, &t, out, sizeof(out), &res) == 0, "steps: a command under a missing policy");
        is_str(t.steps, "begun failed", "steps: begun, failed");
        ok(t.nmsgs == 1 && strstr(t.msgs[0], "no-such-policy"), "steps: failed names the policy: %s",
           t.nmsgs ? t.msgs[0] : "(none)");
        is_int(res.status, 125, "steps: status 125");
        is_str(txbox_outcome_name(res.rec.outcome), "rolled_back", "steps: rolled back");
        txbox_command_result_clear(&res);
}

int main(void)
{
        struct txbox_ws *ws = NULL;
        struct txbox_error err = {0};
        struct txbox_command_result res;
        char ws_path[256], path[300];

        if (!tap_workspace(dir, sizeof(dir), "txbox-cmd", ws_path, sizeof(ws_path)))
                return 1;
        ok(txbox_ws_open(ws_path, NULL, TXBOX_OPEN_RECOVER, &ws, &err) == 0, "open the workspace: %s",
           err.msg);

        ok(run(ws, "echo hi; echo oops >&2; echo x >f.txt", 0, &res) == 0, "a command runs");
        is_int(res.status, 0, "status 0");
        is_str(res.out, "hi\n", "stdout captured");
        is_str(res.err, "oops\n", "stderr captured");
        is_str(txbox_outcome_name(res.rec.outcome), "committed", "committed");
        snprintf(path, sizeof(path), "%s/f.txt", ws_path);
        ok(access(path, F_OK) == 0, "its file is in the workspace");
        txbox_command_result_clear(&res);

        ok(run(ws, "echo y >g.txt; exit 3", 0, &res) == 0, "a failing command runs");
        is_int(res.status, 3, "its status");
        is_str(txbox_outcome_name(res.rec.outcome), "rolled_back", "rolled back");
        ok(res.why && strstr(res.why, "exited with status 3"), "the why line says so: %s",
           res.why ? res.why : "(null)");
        txbox_command_result_clear(&res);

        /* The read-only home: the program says so in its output, txbox says what to do (a
         * home under /tmp is not there at all: the sandbox has its own /tmp). */
        if (!strncmp(dir, "/tmp/", 5))
                printf("ok %d - # SKIP the read-only home needs a TMPDIR outside /tmp\n", ++tap_n);
        else {
                ok(run(ws, "touch ~/notes.txt", 0, &res) == 0, "a write to the home runs");
                ok(res.status != 0 && strstr(res.err, "Read-only file system"), "it fails on the read-only home: %s",
                   res.err);
                ok(res.why && strstr(res.why, "only the workspace, /tmp and the caches under $HOME") &&
                           strstr(res.why, "sandbox: caches"),
                   "the why line adds where the program can write: %s", res.why ? res.why : "(null)");
                txbox_command_result_clear(&res);
                ok(run(ws, "echo Read-only file system", 0, &res) == 0 && res.status == 0 && !res.why,
                   "a command that succeeds gets no such notice");
                txbox_command_result_clear(&res);
        }

        ok(run(ws, "git push --force origin main", 0, &res) == 0, "a history-destroying command is decided");
        is_int(res.status, 126, "refused before it ran: 126");
        is_str(res.rec.decision, "deny", "decision deny");
        ok(res.rec.rule != NULL && res.why && strstr(res.why, res.rec.rule), "the why line names the rule");
        txbox_command_result_clear(&res);

        ok(run(ws, "head -c 100000 /dev/zero | tr '\\000' a", 1000, &res) == 0, "a chatty command runs");
        is_int(strlen(res.out), 1000, "stdout is capped");
        ok(res.out_truncated, "and flagged truncated");
        ok(!res.err_truncated, "stderr is not");
        txbox_command_result_clear(&res);

        test_steps(ws, ws_path);

        txbox_ws_close(ws);
        tap_rmtree(dir);
        return tap_done();
}

/* txbox_command_run: one command as one transaction with its output captured (the face of
 * the MCP server and the agent loop).  Only harmless commands run here (this test is not
 * jailed): the refused one is a forced git push in a directory that is no repository. */
#define _GNU_SOURCE
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

int main(void)
{
        struct txbox_ws *ws = NULL;
        struct txbox_error err = {0};
        struct txbox_command_result res;
        char ws_path[256], home[256], path[300];

        if (!tap_mkdtemp(dir, sizeof(dir), "txbox-cmd"))
                return 1;
        snprintf(ws_path, sizeof(ws_path), "%s/ws", dir);
        snprintf(home, sizeof(home), "%s/home", dir);
        mkdir(ws_path, 0755);
        mkdir(home, 0755);
        setenv("HOME", home, 1);
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

        txbox_ws_close(ws);
        tap_rmtree(dir);
        return tap_done();
}

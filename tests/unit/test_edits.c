/* Edits made outside a transaction (src/lib/txn/edits.c) through the library: a capture
 * before, the edit (in place, or a new file renamed over the name), a record after; undo
 * restores the original and its inode; a capture that is stale, missing, damaged or given
 * bad paths is refused; an edit that changed nothing or whose original was not kept is not
 * recorded.  No command runs; everything is in the test's own directory under TMPDIR.
 *
 * tests/run.sh runs this as root and as an unprivileged user (as-user). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "txbox.h"

static char dir[200], ws_path[256];
static struct txbox_ws *ws;

static const char *p(const char *name)
{
        static char buf[4][600];
        static int k;
        k = (k + 1) % 4;
        snprintf(buf[k], sizeof(buf[k]), "%s/%s", ws_path, name);
        return buf[k];
}

static const char *text(const char *name)
{
        static char buf[256];
        int fd = open(p(name), O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return "-";
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        buf[n > 0 ? n : 0] = '\0';
        return buf;
}

/* In place (truncate and write), as Codex and Gemini CLI do. */
static void write_in_place(const char *name, const char *s)
{
        int fd = open(p(name), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, s, strlen(s)) != (ssize_t)strlen(s))
                printf("# cannot write %s\n", name);
        if (fd >= 0)
                close(fd);
}

/* A new file renamed over the name, as Claude Code does. */
static void write_renamed(const char *name, const char *s)
{
        char tmp[700];
        snprintf(tmp, sizeof(tmp), "%s.tmp", p(name));
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, s, strlen(s)) != (ssize_t)strlen(s) || rename(tmp, p(name)) < 0)
                printf("# cannot write %s\n", name);
        if (fd >= 0)
                close(fd);
}

static ino_t ino(const char *name)
{
        struct stat st;
        return stat(p(name), &st) == 0 ? st.st_ino : 0;
}

static int capture(const char *key, const char *path)
{
        char *argv[] = {"test", "Edit", (char *)path, NULL}, *paths[] = {(char *)path, NULL};
        struct txbox_error err = {0};
        int r = txbox_edit_capture(ws, key, argv, paths, &err);
        if (r < 0)
                printf("# capture: %s\n", err.msg);
        return r;
}

static int record(const char *key, struct txbox_error *err)
{
        struct txbox_record rec = {0};
        int r = txbox_edit_record(ws, key, &rec, err);
        txbox_record_clear(&rec);
        return r;
}

int main(void)
{
        struct txbox_error err = {0};
        struct txbox_record rec = {0};

        if (!tap_workspace(dir, sizeof(dir), "txbox-edits", ws_path, sizeof(ws_path)) ||
            txbox_ws_open(ws_path, NULL, TXBOX_OPEN_RECOVER, &ws, &err) < 0) {
                printf("Bail out! no workspace: %s\n", err.msg);
                return 1;
        }

        /* in place: recorded, undone, the inode back */
        write_in_place("a.txt", "one\n");
        ino_t a0 = ino("a.txt");
        is_int(capture("k1", "a.txt"), 0, "capture before an edit");
        is_int(ino("a.txt"), a0, "... reads the workspace only");
        write_in_place("a.txt", "one\ntwo\n");
        is_int(txbox_edit_record(ws, "k1", &rec, &err), 0, "record after an edit in place");
        is_int(rec.outcome, TXBOX_COMMITTED, "... a committed transaction");
        ok(rec.npaths == 1 && !strcmp(rec.paths[0].path, "a.txt") && rec.paths[0].change == TXBOX_MODIFIED,
           "... a.txt modified");
        ok(rec.commit_seq > 0 && rec.argv && !strcmp(rec.argv[1], "Edit"), "... with its commit number and command");
        is_str(text("a.txt"), "one\ntwo\n", "the edit stays");
        ok(ino("a.txt") != a0, "... its content under a new inode");
        txbox_record_clear(&rec);
        is_int(txbox_undo(ws, NULL, &rec, &err), 0, "txbox_undo of the edit");
        is_str(text("a.txt"), "one\n", "... the original content");
        is_int(ino("a.txt"), a0, "... in the original inode");
        txbox_record_clear(&rec);

        /* renamed over: the kept inode is the undo data */
        write_in_place("b.txt", "bee\n");
        ino_t b0 = ino("b.txt");
        capture("k2", "b.txt");
        write_renamed("b.txt", "BEE\n");
        is_int(record("k2", &err), 0, "record after a new file renamed over the name");
        is_int(txbox_undo(ws, NULL, NULL, &err), 0, "... undone");
        ok(!strcmp(text("b.txt"), "bee\n") && ino("b.txt") == b0, "... the original inode and content");

        /* a new file in a new directory, and a deletion */
        capture("k3", "new/dir/c.txt");
        mkdir(p("new"), 0755), mkdir(p("new/dir"), 0755);
        write_in_place("new/dir/c.txt", "c\n");
        is_int(txbox_edit_record(ws, "k3", &rec, &err), 0, "record of a file in two new directories");
        is_int(rec.npaths, 3, "... three paths added");
        txbox_record_clear(&rec);
        capture("k4", "b.txt");
        unlink(p("b.txt"));
        is_int(record("k4", &err), 0, "record of a deletion");
        is_int(txbox_undo(ws, NULL, NULL, &err), 0, "... undone");
        ok(!strcmp(text("b.txt"), "bee\n") && ino("b.txt") == b0, "... the file back, its inode");
        is_int(txbox_undo(ws, NULL, NULL, &err), 0, "the new file's record undone");
        ok(access(p("new"), F_OK) < 0, "... the directories it made are gone too");

        /* other hard links: the content comes back, the links are left as the edit made them */
        write_in_place("h.txt", "h\n");
        if (link(p("h.txt"), p("h2.txt")) < 0)
                printf("# link failed\n");
        capture("k5", "h.txt");
        write_in_place("h.txt", "H\n");
        is_int(record("k5", &err), 0, "record of an edit in place of a file with another hard link");
        is_str(text("h2.txt"), "H\n", "... the other link keeps the new content");
        is_int(txbox_undo(ws, NULL, NULL, &err), 0, "... undone");
        is_str(text("h.txt"), "h\n", "... the name's original content back");

        /* nothing changed, no capture, a stale one, a dropped one */
        capture("k6", "a.txt");
        is_int(record("k6", &err), 1, "an edit that changed nothing: 1, nothing recorded");
        is_int(record("k6", &err), -ENOENT, "... and its capture is gone");
        is_int(record("no-such", &err), -ENOENT, "a record without a capture: -ENOENT");
        capture("k7", "a.txt");
        {
                struct txbox_command cmd = {.shell = "echo by-command >a.txt"};
                struct txbox_command_result res;
                if (txbox_command_run(ws, &cmd, &res, &err) < 0 || res.rec.outcome != TXBOX_COMMITTED)
                        printf("# the command did not commit\n");
                txbox_command_result_clear(&res);
        }
        write_in_place("a.txt", "by-tool\n");
        is_int(record("k7", &err), -ESTALE, "a commit of the path between capture and record: -ESTALE");
        ok(strstr(err.msg, "a transaction changed it") != NULL, "... saying why (%s)", err.msg);
        capture("k8", "a.txt");
        is_int(txbox_edit_drop(ws, "k8"), 0, "txbox_edit_drop");
        is_int(record("k8", &err), -ENOENT, "... the capture is gone");

        /* bad paths */
        static const char *const bad[] = {"/abs", "../up", "a/../b", "a//b", "./a", "", "a/", NULL};
        for (const char *const *b = bad; *b; b++) {
                char *argv[] = {"t", NULL}, *paths[] = {(char *)*b, NULL};
                is_int(txbox_edit_capture(ws, "kb", argv, paths, &err), -EINVAL, "path '%s' refused", *b);
        }
        char **many = calloc(258, sizeof(char *));
        for (int i = 0; i < 257; i++)
                many[i] = strdup("x");
        char *argv1[] = {"t", NULL};
        is_int(txbox_edit_capture(ws, "km", argv1, many, &err), -EINVAL, "257 paths refused");
        for (int i = 0; i < 257; i++)
                free(many[i]);
        free(many);

        /* a symlink where the file was: not recorded */
        write_in_place("s.txt", "s\n");
        capture("k9", "s.txt");
        unlink(p("s.txt"));
        if (symlink("/etc/passwd", p("s.txt")) < 0)
                printf("# symlink failed\n");
        is_int(record("k9", &err), -EINVAL, "a path that became a symlink: not recorded");
        unlink(p("s.txt"));

        /* a damaged capture is refused, never followed */
        capture("k10", "a.txt");
        {
                char cmd[1200];
                snprintf(cmd, sizeof(cmd),
                         "for m in '%s'/home/.local/state/txbox/*/edits/*/meta; do "
                         "printf '{\"version\":1,\"argv\":[\"t\"],\"entries\":[{\"path\":\"../../etc/passwd\","
                         "\"before\":\"file\",\"mode\":33188}]}' >\"$m\"; done",
                         dir);
                if (system(cmd) != 0)
                        printf("# cannot damage the capture\n");
        }
        is_int(record("k10", &err), -EBADMSG, "a capture whose meta names a path outside: refused");

        txbox_ws_close(ws);
        tap_rmtree(dir);
        return tap_done();
}

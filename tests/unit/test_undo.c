/* txbox_undo through the library: a committed change undone puts the originals back (a
 * file rewritten, a file made); an undo is refused, naming the path, when the file changed
 * since (outside txbox or by a later commit), and leaves it as it is; an unknown id, an
 * empty log, a transaction undone already or never committed are refused.  Only harmless
 * commands run (this test is not jailed), in its own workspace under TMPDIR.
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

/* Run shell through txbox; the new transaction's id in id ("" unless it committed). */
static void run(struct txbox_ws *ws, const char *shell, char *id)
{
        struct txbox_command cmd = {.shell = shell};
        struct txbox_command_result res;
        struct txbox_error err = {0};

        id[0] = '\0';
        if (txbox_command_run(ws, &cmd, &res, &err) < 0) {
                printf("# txbox_command_run: %s\n", err.msg);
                return;
        }
        if (res.rec.outcome == TXBOX_COMMITTED)
                snprintf(id, 32, "%s", res.rec.id);
        else
                printf("# %s: %s\n", shell, txbox_outcome_name(res.rec.outcome));
        txbox_command_result_clear(&res);
}

/* The workspace file's text, or "-" when it is missing. */
static const char *text(const char *name)
{
        static char buf[256];
        char path[512];

        snprintf(path, sizeof(path), "%s/%s", ws_path, name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return "-";
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        buf[n > 0 ? n : 0] = '\0';
        return buf;
}

static void write_ws(const char *name, const char *s)
{
        char path[512];
        snprintf(path, sizeof(path), "%s/%s", ws_path, name);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, s, strlen(s)) != (ssize_t)strlen(s))
                printf("# write %s: %m\n", path);
        if (fd >= 0)
                close(fd);
}

static int undo(struct txbox_ws *ws, const char *id, struct txbox_record *out, struct txbox_error *err)
{
        memset(err, 0, sizeof(*err));
        int r = txbox_undo(ws, id, out, err);
        if (r < 0)
                printf("# txbox_undo(%s): %d %s\n", id ? id : "newest", r, err->msg);
        return r;
}

int main(void)
{
        struct txbox_ws *ws = NULL;
        struct txbox_error err = {0};
        struct txbox_record rec = {0};
        char a[32], b[32], c[32];

        if (!tap_workspace(dir, sizeof(dir), "txbox-undo", ws_path, sizeof(ws_path)))
                return 1;
        write_ws("f.txt", "old\n");
        ok(txbox_ws_open(ws_path, NULL, TXBOX_OPEN_RECOVER, &ws, &err) == 0, "open the workspace: %s",
           err.msg);
        if (!ws)
                return tap_done();

        is_int(undo(ws, NULL, NULL, &err), -ENOENT, "an empty log: nothing to undo");
        ok(strstr(err.msg, "nothing to undo"), "saying so");
        is_int(undo(ws, "0123456789abcdef", NULL, &err), -ENOENT, "an unknown id is refused");
        ok(err.msg[0], "with a message: %s", err.msg);

        /* A file rewritten and one made, undone. */
        run(ws, "echo new > f.txt; echo made > g.txt", a);
        ok(a[0], "a change commits");
        is_str(text("f.txt"), "new\n", "f.txt rewritten");
        is_str(text("g.txt"), "made\n", "g.txt made");
        is_int(undo(ws, NULL, &rec, &err), 0, "the newest commit is undone");
        is_str(rec.id, a, "it was that commit");
        is_str(txbox_outcome_name(rec.outcome), txbox_outcome_name(TXBOX_UNDONE), "its record says undone");
        txbox_record_clear(&rec);
        is_str(text("f.txt"), "old\n", "f.txt is back");
        is_str(text("g.txt"), "-", "g.txt is gone again");
        ok(undo(ws, a, NULL, &err) < 0, "undoing it again is refused");
        ok(strstr(err.msg, "only committed"), "only committed transactions can be undone");
        is_str(text("f.txt"), "old\n", "and changes nothing");

        /* Changed outside txbox since: refused, the path named, the outside change kept. */
        run(ws, "echo two > f.txt", b);
        ok(b[0], "a second change commits");
        write_ws("f.txt", "mine, changed by hand\n");
        is_int(undo(ws, b, NULL, &err), -EBUSY, "undo after an outside change is refused");
        ok(strstr(err.msg, "f.txt") && strstr(err.msg, "outside"), "naming the path changed outside");
        is_str(text("f.txt"), "mine, changed by hand\n", "the outside change stays");

        /* Changed by a later commit: refused, naming the path; the later one undoes first. */
        write_ws("h.txt", "h0\n");
        run(ws, "echo h1 > h.txt", b);
        run(ws, "echo h2 > h.txt", c);
        ok(b[0] && c[0], "two commits to h.txt");
        is_int(undo(ws, b, NULL, &err), -EBUSY, "undo of the older one is refused");
        ok(strstr(err.msg, "h.txt") && strstr(err.msg, c), "naming the path (and the later tx): %s",
           err.msg);
        is_str(text("h.txt"), "h2\n", "h.txt untouched");
        is_int(undo(ws, c, NULL, &err), 0, "the later one undoes");
        is_str(text("h.txt"), "h1\n", "h.txt as the older commit left it");
        is_int(undo(ws, b, NULL, &err), 0, "then the older one");
        is_str(text("h.txt"), "h0\n", "h.txt as it was");

        txbox_ws_close(ws);
        tap_rmtree(dir);
        return tap_done();
}

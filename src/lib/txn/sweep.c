/* The sweeper: the thread that runs beside each program to insert its audit row, checkpoint
 * the log, run the automatic retention (gc.c) and empty state/trash, and the trash it empties.
 * It is the one part of a transaction that runs on a thread of its own. */
#define _GNU_SOURCE
#include "txn/tx.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/failpoint.h"
#include "base/fileio.h"
#include "base/mem.h"
#include "base/process.h"
#include "base/rmtree.h"
#include "base/strv.h"

/* ---- trash: removing a finished transaction's directories costs about a millisecond
 * (an inode freed per directory, on the caller's clock), so they are moved aside in one
 * rename and removed while the next program runs.  Nothing in the trash is needed: a crash
 * leaves it for the next sweep. ---- */

void ws_trash(struct txbox_ws *ws, int dirfd, const char *name, const char *as)
{
        if (ws->trash_fd < 0 || renameat2(dirfd, name, ws->trash_fd, as, RENAME_NOREPLACE) < 0)
                rm_rf_at(dirfd, name);
}

static void sweep_db_release(struct txbox_ws *ws)
{
        pthread_mutex_lock(&ws->sweep_mu);
        ws->sweep_db_done = true;
        pthread_cond_signal(&ws->sweep_cv);
        pthread_mutex_unlock(&ws->sweep_mu);
}

static void *sweep_main(void *arg)
{
        struct txbox_ws *ws = arg;
        struct strvec names = {0};
        DIR *d;
        struct dirent *de;

        if (ws->log_rec) {
                /* tests: die with the program started and no row, or fail the insert */
                int fp = failpoint("log");
                if (fp < 0)
                        ws->log_r = tx_err(&ws->log_err, -fp, "cannot write the audit row: %s",
                                           strerror(-fp));
                else
                        ws->log_r = audit_insert(ws->audit, ws->log_rec, &ws->log_err);
                ws->log_done = true;
        }
        audit_checkpoint(ws->audit);
        /* What the trash holds now, read before the log is released: the commit waits for
         * that, and only then moves this transaction's own leftovers in, which stay for the
         * next command (a directory read while entries arrive may or may not show them). */
        d = dir_stream(ws->trash_fd);
        while (d && (de = readdir(d)))
                if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
                        strvec_push(&names, xstrdup(de->d_name));
        /* The log is the program's own from here: the trash may take longer than the
         * program (a synchronous discard per directory on some file systems), and goes on
         * beside its evaluation and commit. */
        sweep_db_release(ws);
        gc_auto(ws); /* the retention, after a commit (gc.c): before this command's own commit */
        for (size_t i = 0; d && i < names.n; i++)
                if (!ws_unsettled_layer(ws, names.v[i]))
                        rm_rf_at(dirfd(d), names.v[i]);
        strvec_clear(&names);
        if (d)
                closedir(d);
        atomic_store(&ws->swept, true);
        return NULL;
}

void ws_sweep(struct txbox_ws *ws, struct txbox_record *log)
{
        if (ws->sweeping) {
                if (!log && !atomic_load(&ws->swept))
                        return; /* the last one is still at it */
                ws_sweep_wait(ws);
        }
        ws->log_rec = log;
        ws->log_done = false;
        atomic_store(&ws->swept, false);
        ws->sweep_db_done = false;
        ws->sweeping = thread_start(&ws->sweeper, sweep_main, ws) == 0;
}

void ws_sweep_wait(struct txbox_ws *ws)
{
        if (ws->sweeping)
                pthread_join(ws->sweeper, NULL);
        ws->sweeping = false;
}

/* Wait until the sweeper is done with the audit log (its row written); it may still be
 * emptying the trash. */
void ws_sweep_db_wait(struct txbox_ws *ws)
{
        if (!ws->sweeping)
                return;
        pthread_mutex_lock(&ws->sweep_mu);
        while (!ws->sweep_db_done)
                pthread_cond_wait(&ws->sweep_cv, &ws->sweep_mu);
        pthread_mutex_unlock(&ws->sweep_mu);
}

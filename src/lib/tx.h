/* Internal view of workspaces and transactions, shared by tx.c, undo.c and recover.c. */
#ifndef TXBOX_TX_H
#define TXBOX_TX_H

#include "audit.h"
#include "changeset.h"
#include "sandbox.h"

struct txbox_ws {
        char *path;       /* canonical workspace path */
        char *state;      /* canonical state dir */
        char *state_mask; /* what the sandbox must not see (the state dir or its parent) */
        int ws_fd, state_fd, tx_fd, active_fd, lock_fd;
        struct audit *audit;
};

struct txbox_tx {
        struct txbox_ws *ws;
        struct txbox_record rec;
        int dir_fd;  /* state/tx/ID */
        int lock_fd; /* state/active/ID, flock'd */
        struct changeset cs;
        bool evaluated;
        int64_t t0_us;
        bool stuck; /* a failed commit could not be reverted: recovery owns it now */
        char *warning; /* a non-fatal problem seen before the run (unmapped owners) */
        struct idmap idmap; /* how ids map into the sandbox */
        int64_t begin_seq;  /* the newest commit_seq when the transaction began */
        int64_t begin_ns;   /* CLOCK_REALTIME_COARSE when it began */
};

/* Serialise commits, undos and recovery on the workspace. */
int ws_lock(struct txbox_ws *ws, struct txbox_error *err);
void ws_unlock(struct txbox_ws *ws);

void tx_record_take_changes(struct txbox_tx *tx);
/* Claim state/active/ID (flock'd file) while this process works on the transaction, so that
 * recovery after a crash finds it; returns the lock fd.  -EBUSY when another process has it. */
int tx_claim(struct txbox_ws *ws, const char *id, bool wait, struct txbox_error *err);
/* Release a claim once the transaction is in a final state. */
void tx_unclaim(struct txbox_ws *ws, const char *id, int fd);

#endif

/* The life of a transaction handle (struct txbox_tx) as a state machine: which step may
 * follow which, in one table (txstate.c), so that the order the public step functions
 * must be called in is written down and checked, not implied.  docs/DESIGN.md,
 * "A transaction's states", draws it. */
#ifndef TXBOX_TXSTATE_H
#define TXBOX_TXSTATE_H

#include <stdbool.h>

enum tx_state {
        TX_NEW,         /* claimed, its directory and layers made; nothing in the log yet */
        TX_SEALED,      /* begin snapshot written, audit row written or handed to the sweeper */
        TX_RAN,         /* the program ran; its layer holds what it did */
        TX_EVALUATED,   /* changeset built and effect rules judged */
        TX_COMMITTING,  /* row says committing, journal written: applying under the lock */
        TX_PENDING,     /* pending in the log with its layers: kept, loaded, a session */
        TX_COMMITTED,   /* final: applied, marked and recorded */
        TX_ROLLED_BACK, /* final: layers removed, recorded */
        TX_DENIED,      /* final: refused before it ran, recorded */
        TX_STUCK,       /* final for this handle: a commit it could not finish nor revert; recovery's */
        TX_NSTATES
};

struct txbox_tx;

const char *tx_state_name(enum tx_state s);
/* May a handle in state from move to state to?  (The table of txstate.c.) */
bool tx_state_allows(enum tx_state from, enum tx_state to);
/* What must hold of tx in its state (the record's outcome, the row, the sandbox): NULL when
 * it does, else what does not. */
const char *tx_state_broken(const struct txbox_tx *tx);
/* Move tx to state to.  A move the table does not allow, or a state whose invariants do not
 * hold after it, is a bug in txbox: the test build (TXBOX_TESTING) aborts with both states
 * named, as SQLite's pager asserts its own; a release build moves on (its trace says so). */
void tx_move(struct txbox_tx *tx, enum tx_state to);

#endif

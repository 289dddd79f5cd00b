/* The transaction handle's state machine (txstate.h). */
#include <stdio.h>
#include <stdlib.h>

#include "base/trace.h"
#include "txbox.h"
#include "txn/tx.h"
#include "txn/txstate.h"

static const char *const names[TX_NSTATES] = {
        [TX_NEW] = "new",           [TX_SEALED] = "sealed",           [TX_RAN] = "ran",
        [TX_EVALUATED] = "evaluated", [TX_COMMITTING] = "committing", [TX_PENDING] = "pending",
        [TX_COMMITTED] = "committed", [TX_ROLLED_BACK] = "rolled-back", [TX_DENIED] = "denied",
        [TX_STUCK] = "stuck",
};

#define TO(s) (1u << (s))

/* Each state's successors.  Failed steps leave the state as it was: a run that could not
 * start leaves a sealed (or pending) transaction, a commit that found a conflict an
 * evaluated one; each of those may still be rolled back. */
static const unsigned next[TX_NSTATES] = {
        /* sealed by the run (or a session's begin); refused by the policy before it; rolled
         * back when sealing or the policy engine failed */
        [TX_NEW] = TO(TX_SEALED) | TO(TX_DENIED) | TO(TX_ROLLED_BACK),
        /* ran; a session's begin keeps it pending; a run that could not start is rolled back */
        [TX_SEALED] = TO(TX_RAN) | TO(TX_PENDING) | TO(TX_DENIED) | TO(TX_ROLLED_BACK),
        /* judged; a judgement that failed rolls it back */
        [TX_RAN] = TO(TX_EVALUATED) | TO(TX_ROLLED_BACK),
        /* judged again (txbox_tx_evaluate is idempotent); committed (one with nothing to
         * apply has no committing step); kept pending (--commit=keep, a savepoint's end);
         * rolled back */
        [TX_EVALUATED] = TO(TX_EVALUATED) | TO(TX_COMMITTING) | TO(TX_COMMITTED) | TO(TX_PENDING) |
                         TO(TX_ROLLED_BACK),
        /* done; put back whole (nothing applied: evaluated again, to be rolled back); or left
         * to recovery when neither could be finished */
        [TX_COMMITTING] = TO(TX_COMMITTED) | TO(TX_EVALUATED) | TO(TX_STUCK),
        /* a session's next savepoint runs; a pending one is judged for its commit; a refused or
         * dropped savepoint, or rollback --to, leaves the session pending; rolled back */
        [TX_PENDING] = TO(TX_RAN) | TO(TX_EVALUATED) | TO(TX_PENDING) | TO(TX_ROLLED_BACK),
};

const char *tx_state_name(enum tx_state s)
{
        return s < TX_NSTATES ? names[s] : "invalid";
}

bool tx_state_allows(enum tx_state from, enum tx_state to)
{
        return from < TX_NSTATES && to < TX_NSTATES && (next[from] & TO(to));
}

const char *tx_state_broken(const struct txbox_tx *tx)
{
        const struct txbox_record *r = &tx->rec;

        switch (tx->state) {
        case TX_NEW:
                return tx->in_log || tx->log_copy ? "a new transaction has a row" : NULL;
        case TX_SEALED:
                return !tx->in_log && !tx->log_copy ? "a sealed transaction has no row" : NULL;
        case TX_RAN:
        case TX_EVALUATED:
                return tx->sb ? "a transaction that ran still holds a sandbox" : NULL;
        case TX_COMMITTING:
                return r->outcome != TXBOX_COMMITTING ? "a committing transaction's row is not committing" : NULL;
        case TX_PENDING:
                return r->outcome != TXBOX_PENDING ? "a pending transaction's record is not pending" : NULL;
        case TX_COMMITTED:
                return r->outcome != TXBOX_COMMITTED || !tx->in_log ? "a committed transaction has no committed row"
                                                                    : NULL;
        case TX_ROLLED_BACK:
                return r->outcome != TXBOX_ROLLED_BACK ? "a rolled-back transaction's record says otherwise"
                                                       : NULL;
        case TX_DENIED:
                return r->outcome != TXBOX_DENIED ? "a denied transaction's record says otherwise" : NULL;
        case TX_STUCK:
        case TX_NSTATES:
                break;
        }
        return NULL;
}

void tx_move(struct txbox_tx *tx, enum tx_state to)
{
        enum tx_state from = tx->state;
        bool allowed = tx_state_allows(from, to);

        tx->state = to;
        const char *broken = tx_state_broken(tx);
        if (allowed && !broken)
                return;
        char what[200];
        snprintf(what, sizeof(what), "tx %s: %s -> %s: %s", tx->rec.id, tx_state_name(from), tx_state_name(to),
                 allowed ? broken : "a move the state table does not allow");
        trace_mark(what);
#ifdef TXBOX_TESTING
        fprintf(stderr, "txbox: bug: %s\n", what);
        abort();
#endif
}

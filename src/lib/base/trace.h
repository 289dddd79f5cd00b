/* Tracing where a transaction's time goes. */
#ifndef TXBOX_TRACE_H
#define TXBOX_TRACE_H

/* TXBOX_TRACE=1: print the time since the process's first mark, and what, to stderr (for
 * finding where a transaction's time goes; free when unset). */
void trace_mark(const char *what);

#endif

/* Errors as the library reports them: -errno returned, and an optional struct txbox_error
 * (txbox.h) filled with the errno and a message naming what failed. */
#ifndef TXBOX_ERROR_H
#define TXBOX_ERROR_H

struct txbox_error;

/* Set err (may be NULL) to code (positive errno) and a formatted message; return -code. */
int tx_err(struct txbox_error *err, int code, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* Prefix err's message with context ("context: old message"); return -err->code
 * (or -EIO when err is NULL or empty). */
int tx_err_wrap(struct txbox_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif

/* Errors: a message set, or wrapped in the context it travels through. */
#include "base/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "txbox.h"

int tx_err(struct txbox_error *err, int code, const char *fmt, ...)
{
        if (code <= 0)
                code = EIO;
        if (err) {
                va_list ap;
                err->code = code;
                va_start(ap, fmt);
                vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
                va_end(ap);
        }
        return -code;
}

int tx_err_wrap(struct txbox_error *err, const char *fmt, ...)
{
        char prefix[512], old[sizeof(err->msg)];
        va_list ap;

        if (!err)
                return -EIO;
        if (err->code <= 0)
                err->code = EIO;
        va_start(ap, fmt);
        vsnprintf(prefix, sizeof(prefix), fmt, ap);
        va_end(ap);
        memcpy(old, err->msg, sizeof(old));
        /* Truncation is fine: the innermost detail is the least important when too long. */
        size_t n = strlen(prefix);
        memcpy(err->msg, prefix, n);
        if (n + 2 < sizeof(err->msg)) {
                memcpy(err->msg + n, ": ", 2);
                n += 2;
        }
        size_t rest = sizeof(err->msg) - 1 - n;
        size_t olen = strnlen(old, sizeof(old) - 1);
        if (olen > rest)
                olen = rest;
        memcpy(err->msg + n, old, olen);
        err->msg[n + olen] = '\0';
        return -err->code;
}

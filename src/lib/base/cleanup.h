/* Cleanup attributes: a variable freed, closed or forgotten when it leaves its scope, and
 * TAKE_PTR/TAKE_FD to hand it on instead. */
#ifndef TXBOX_CLEANUP_H
#define TXBOX_CLEANUP_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline void freep(void *p) { free(*(void **)p); }
/* Close and forget: a later poll or close of the same variable must not see a number the
 * process may already have reused. */
static inline void closep(int *fd)
{
        if (*fd >= 0) {
                int saved = errno;
                close(*fd);
                errno = saved;
                *fd = -1;
        }
}
static inline void fclosep(FILE **f)
{
        if (*f)
                fclose(*f);
}

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)

#define TAKE_PTR(p)                      \
        ({                               \
                __typeof__(p) _p_ = (p); \
                (p) = NULL;              \
                _p_;                     \
        })
#define TAKE_FD(fd)             \
        ({                      \
                int _fd_ = (fd); \
                (fd) = -1;      \
                _fd_;           \
        })

#endif

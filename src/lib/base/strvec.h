/* The growable array of strings, the type alone: a struct that holds one includes this, and
 * only the files that call its functions (base/strv.h) are rebuilt when those change. */
#ifndef TXBOX_STRVEC_H
#define TXBOX_STRVEC_H

#include <stddef.h>

struct strvec {
        char **v;
        size_t n, cap;
};

#endif

/* Random names. */
#ifndef TXBOX_RANDOM_H
#define TXBOX_RANDOM_H

#include <stddef.h>

/* Random lowercase hex string of 2*nbytes characters (out holds 2*nbytes+1). */
void random_hex(char *out, size_t nbytes);

#endif

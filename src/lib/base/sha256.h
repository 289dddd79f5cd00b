/* SHA-256 of a buffer (FIPS 180-4). */
#ifndef TXBOX_SHA256_H
#define TXBOX_SHA256_H

#include <stddef.h>
#include <stdint.h>

void sha256(const void *data, size_t len, uint8_t out[32]);
/* The digest as 64 lowercase hex digits and a NUL. */
void sha256_hex(const void *data, size_t len, char out[65]);

#endif

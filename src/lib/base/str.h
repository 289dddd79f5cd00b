/* Pure string helpers: prefixes, paths, sizes, the escaping of line-oriented files. */
#ifndef TXBOX_STR_H
#define TXBOX_STR_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

bool str_has_prefix(const char *s, const char *prefix);
/* A positive count or size, digits with an optional K, M or G (binary) suffix; 0 when s is
 * anything else, zero, or does not fit in 64 bits once multiplied. */
uint64_t parse_size(const char *s);
/* Write s to f with every byte that would break a line-oriented file (space and below, '%',
 * DEL) as %XX: the escaping of paths in the journal and the trust store. */
void fput_pct_escaped(FILE *f, const char *s);
/* True when path equals dir or lies beneath it (both relative or both absolute). */
bool path_is_within(const char *path, const char *dir);

#endif

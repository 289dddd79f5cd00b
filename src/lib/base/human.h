/* Text for humans.
 * Names, command lines and messages that reach a terminal come from the program or the
 * model: a byte of them could move the cursor, erase or forge lines, set the window title or
 * write the clipboard.  This is the one escaping for everything txbox writes for humans: C0
 * controls, DEL, C1 controls (U+0080-U+009F), bidirectional overrides (U+202A-U+202E,
 * U+2066-U+2069) and bytes that are not UTF-8 become visible escapes (\n, \t, \r, \xHH,
 * \uHHHH); everything else passes unchanged. */
#ifndef TXBOX_HUMAN_H
#define TXBOX_HUMAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum {
        HUMAN_LINE = 0,       /* one line: newline and tab are escaped too */
        HUMAN_KEEP_LINES = 1, /* text of several lines: newline and tab pass */
};
/* s escaped (NULL: ""), malloc'd. */
char *human_escape(const char *s, unsigned flags);
/* A size for people: "512 B", "97.7 KiB", "1.5 GiB". */
void human_size(uint64_t bytes, char *buf, size_t size);
/* The first n bytes of s escaped, written to f. */
void human_write(FILE *f, const char *s, size_t n, unsigned flags);
/* True when s needs no escaping (HUMAN_LINE). */
bool human_plain(const char *s);

#endif

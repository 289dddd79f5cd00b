/* Clocks: wall time, monotonic time, and which boot this is. */
#ifndef TXBOX_CLOCK_H
#define TXBOX_CLOCK_H

#include <stdint.h>

int64_t now_ms(void);
int64_t mono_us(void);
/* This boot's id (/proc/sys/kernel/random/boot_id, 36 characters), or "" when unreadable:
 * a kernel that has not rebooted still holds in its page cache every write made since. */
const char *boot_id(void);

#endif

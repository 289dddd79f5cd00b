/* Small macros every layer uses. */
#ifndef TXBOX_MACROS_H
#define TXBOX_MACROS_H

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif

/* Every base header at once, for code not yet moved to the headers it uses.  Nothing in the
 * tree includes it: include the base headers of what a file uses instead, so that touching
 * one rebuilds only its users.  To be removed once no branch in flight needs it. */
#ifndef TXBOX_UTIL_H
#define TXBOX_UTIL_H

#include "txbox.h"

#include "base/beneath.h"
#include "base/cleanup.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/failpoint.h"
#include "base/fileio.h"
#include "base/human.h"
#include "base/macros.h"
#include "base/mem.h"
#include "base/process.h"
#include "base/random.h"
#include "base/rmtree.h"
#include "base/str.h"
#include "base/strv.h"
#include "base/trace.h"

#endif

/* Shared by the fuzz targets (libFuzzer's entry points) and the replay driver, replay.c,
 * which runs a target over its corpus with a plain main() so that make check needs no
 * clang.  Nothing a target does executes a command: they parse and match strings only. */
#ifndef TXBOX_FUZZ_H
#define TXBOX_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A made-up context, so that results depend on nothing on the machine. */
#define FUZZ_WORKSPACE "/work/project"
#define FUZZ_HOME "/home/agent"

#endif

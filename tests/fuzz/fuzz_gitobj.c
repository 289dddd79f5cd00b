/* Fuzz target: git's object database as the effect rules read it (src/lib/policy/gitobj.c)
 * from bytes a command could leave in the workspace.  The input is a pack index and a pack
 * (a 2-byte big-endian length of the index, the index, then the pack), written as
 * objects/pack/pack-f.{idx,pack} of a temporary directory, and also as one loose object
 * file; every object the index names (up to 64) and the loose one are looked up and read,
 * then what a removal of the pack would leave.  Nothing is executed; the directory is this
 * target's own. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "policy/gitobj.h"

static char dir[4096];
static int dfd = -1;
static const uint8_t loose[GIT_OID_RAW] = {0xab, 0xcd};

static void remove_dir(void)
{
        char p[4200];
        static const char *const files[] = {"objects/pack/pack-f.idx", "objects/pack/pack-f.pack",
                                            "objects/ab/cd00000000000000000000000000000000000000"};
        for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
                snprintf(p, sizeof(p), "%s/%s", dir, files[i]);
                unlink(p);
        }
        static const char *const dirs[] = {"objects/pack", "objects/ab", "objects", ""};
        for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
                snprintf(p, sizeof(p), "%s/%s", dir, dirs[i]);
                rmdir(p);
        }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void)argc, (void)argv;
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof(dir), "%s/txbox-fuzz-gitobj-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(dir))
                abort();
        atexit(remove_dir);
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0 || mkdirat(dfd, "objects", 0755) < 0 || mkdirat(dfd, "objects/pack", 0755) < 0 ||
            mkdirat(dfd, "objects/ab", 0755) < 0)
                abort();
        return 0;
}

static void put(const char *name, const uint8_t *data, size_t len)
{
        int fd = openat(dfd, name, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
        if (fd < 0 || (len && write(fd, data, len) != (ssize_t)len))
                abort();
        close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 2)
                return 0;
        size_t il = (size_t)data[0] << 8 | data[1];
        if (il > size - 2)
                il = size - 2;
        put("objects/pack/pack-f.idx", data + 2, il);
        put("objects/pack/pack-f.pack", data + 2 + il, size - 2 - il);
        put("objects/ab/cd00000000000000000000000000000000000000", data, size);

        struct godb *db = godb_open(dfd, -1, "objects", NULL);
        enum gobj_type t;
        uint8_t *out = NULL;
        size_t len;
        /* the names the index lists: after the version-2 header and fan-out */
        const uint8_t *names = data + 2 + 8 + 1024;
        for (size_t i = 0; i < 64 && il >= 8 + 1024 + (i + 1) * GIT_OID_RAW; i++) {
                if (godb_has(db, names + i * GIT_OID_RAW, GSIDE_BEFORE, false) &&
                    godb_read(db, names + i * GIT_OID_RAW, GSIDE_BEFORE, 1u << 20, &t, &out, &len) == 0) {
                        if (t < GOBJ_COMMIT || t > GOBJ_TAG || out[len] != 0)
                                abort(); /* a read object has a type and is NUL-terminated */
                        free(out);
                        out = NULL;
                }
        }
        if (godb_has(db, loose, GSIDE_BEFORE, true))
                abort(); /* its content cannot hash to a made-up name */
        if (godb_read(db, loose, GSIDE_BEFORE, 1u << 20, &t, &out, &len) == 0)
                abort();
        godb_free(db);
        return 0;
}

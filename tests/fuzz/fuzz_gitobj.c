/* Fuzz target: git's object database as the effect rules read it (src/lib/policy/gitobj.c)
 * from bytes a command could leave in the workspace.  The input is a pack index and a pack
 * (a 2-byte big-endian length of the index, the index, then the pack), written as
 * objects/pack/pack-f.{idx,pack} of a temporary directory (the workspace as it was), and
 * the whole input also as one loose object file.  Every object the index names (up to 128)
 * and the loose one are looked up and read; then the same as a transaction would leave it:
 * its layer (up/) holds a copy of the pack as pack-g, its changeset deletes pack-f and the
 * loose object and adds pack-g; the objects are looked up and read on that side (past 256
 * lookups the indexes are read whole), and what vanished is listed.  Nothing is executed;
 * the directory is this target's own. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "policy/gitobj.h"
#include "txbox.h"

#define LOOSE "objects/ab/cd00000000000000000000000000000000000000"
#define NAMES_MAX 128

static char dir[4096];
static int dfd = -1, ufd = -1;
static const uint8_t loose[GIT_OID_RAW] = {0xab, 0xcd};

static void remove_dir(void)
{
        char p[4200];
        static const char *const files[] = {"objects/pack/pack-f.idx",    "objects/pack/pack-f.pack", LOOSE,
                                            "up/objects/pack/pack-g.idx", "up/objects/pack/pack-g.pack"};
        for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
                snprintf(p, sizeof(p), "%s/%s", dir, files[i]);
                unlink(p);
        }
        static const char *const dirs[] = {"objects/pack", "objects/ab", "objects", "up/objects/pack", "up/objects",
                                           "up",           ""};
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
            mkdirat(dfd, "objects/ab", 0755) < 0 || mkdirat(dfd, "up", 0755) < 0 ||
            mkdirat(dfd, "up/objects", 0755) < 0 || mkdirat(dfd, "up/objects/pack", 0755) < 0)
                abort();
        ufd = openat(dfd, "up", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (ufd < 0)
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

/* Look up and read every name the index lists on side; a read object has a type and is
 * NUL-terminated.  The loose file is no object (unless the index lists its name). */
static void read_all(struct godb *db, const uint8_t *names, size_t n, unsigned side, bool loose_listed)
{
        enum gobj_type t;
        uint8_t *out = NULL;
        size_t len;
        for (size_t i = 0; i < n; i++) {
                if (godb_has(db, names + i * GIT_OID_RAW, side, false) &&
                    godb_read(db, names + i * GIT_OID_RAW, side, 1u << 20, &t, &out, &len) == 0) {
                        if (t < GOBJ_COMMIT || t > GOBJ_TAG || out[len] != 0)
                                abort();
                        free(out);
                        out = NULL;
                }
        }
        if (loose_listed) /* the index may list its name: a pack's entry is found by name */
                return;
        if (godb_has(db, loose, side, true))
                abort(); /* its content cannot hash to a made-up name */
        if (godb_read(db, loose, side, 1u << 20, &t, &out, &len) == 0)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 2)
                return 0;
        size_t il = (size_t)data[0] << 8 | data[1];
        if (il > size - 2)
                il = size - 2;
        const uint8_t *idx = data + 2, *pack = data + 2 + il;
        size_t pl = size - 2 - il;
        put("objects/pack/pack-f.idx", idx, il);
        put("objects/pack/pack-f.pack", pack, pl);
        put("up/objects/pack/pack-g.idx", idx, il);
        put("up/objects/pack/pack-g.pack", pack, pl);
        put(LOOSE, data, size);
        /* the names the index lists: after the version-2 header and fan-out */
        const uint8_t *names = idx + 8 + 1024;
        bool listed = memmem(idx, il, loose, GIT_OID_RAW) != NULL;
        size_t n = 0;
        while (n < NAMES_MAX && il >= 8 + 1024 + (n + 1) * GIT_OID_RAW)
                n++;

        struct godb *db = godb_open(dfd, -1, "objects", NULL);
        read_all(db, names, n, GSIDE_BEFORE, listed);
        godb_free(db);

        /* as a transaction leaves it: pack-f and the loose object deleted, pack-g added */
        struct txbox_path paths[] = {
                {.path = (char *)LOOSE, .change = TXBOX_DELETED},
                {.path = (char *)"objects/pack/pack-f.idx", .change = TXBOX_DELETED},
                {.path = (char *)"objects/pack/pack-f.pack", .change = TXBOX_DELETED},
                {.path = (char *)"objects/pack/pack-g.idx", .change = TXBOX_ADDED},
                {.path = (char *)"objects/pack/pack-g.pack", .change = TXBOX_ADDED},
        };
        struct changeset cs = {.paths = paths, .npaths = sizeof(paths) / sizeof(paths[0])};
        db = godb_open(dfd, ufd, "objects", &cs);
        read_all(db, names, n, GSIDE_AFTER, listed);
        struct oidset gone = {0};
        godb_vanished(db, &gone);
        /* what vanished is the loose object or a name the removed index lists */
        for (size_t i = 0; i < gone.cap; i++) {
                if (!gone.used[i] || !memcmp(gone.v[i], loose, GIT_OID_RAW))
                        continue;
                if (!memmem(idx, il, gone.v[i], GIT_OID_RAW))
                        abort();
        }
        oidset_clear(&gone);
        godb_free(db);
        return 0;
}

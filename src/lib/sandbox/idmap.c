/* The sandbox's id maps: which of our uids and gids exist inside its user namespace, planned
 * once per workspace (idmap_plan) and written by the supervisor into /proc/PID/uid_map and
 * gid_map of each new sandbox, or of a server's shared namespaces.  A file of its own: the
 * layers above ask it which ids a sandbox can hold (idmap_has_uid, idmap_has_gid), and the
 * sandbox's start needs only its last step (sandbox_write_idmaps).
 */
#define _GNU_SOURCE
#include "sandbox/sandbox.h"

#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <linux/capability.h>

#include "base/cleanup.h"
#include "base/error.h"
#include "sandbox/sandbox_int.h"

static bool have_setid_caps(void)
{
        struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
        struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {0};

        /* capget: /proc/self/status would be formatted whole for one line of it. */
        if (syscall(SYS_capget, &h, d) < 0)
                return false;
        return (d[0].effective & (1u << CAP_SETUID)) && (d[0].effective & (1u << CAP_SETGID));
}

static int read_own_map(const char *file, uint32_t start[], uint32_t count[], size_t *n)
{
        _cleanup_fclose_ FILE *f = fopen(file, "re");
        unsigned long inside, outside, cnt;

        if (!f)
                return -errno;
        *n = 0;
        while (*n < IDMAP_MAX && fscanf(f, "%lu %lu %lu", &inside, &outside, &cnt) == 3) {
                start[*n] = (uint32_t)inside;
                count[*n] = (uint32_t)cnt;
                (*n)++;
        }
        return 0;
}

int idmap_plan(struct idmap *m, struct txbox_error *err)
{
        uint32_t s[IDMAP_MAX], c[IDMAP_MAX];
        size_t n;
        int r;

        memset(m, 0, sizeof(*m));
        m->privileged = have_setid_caps();
        if (!m->privileged) {
                m->uid[0].start = (uint32_t)geteuid();
                m->gid[0].start = (uint32_t)getegid();
                m->uid[0].count = m->gid[0].count = 1;
                m->nuid = m->ngid = 1;
                return 0;
        }
        /* Privileged: the sandbox sees every id we see, so no file is unmapped. */
        if ((r = read_own_map("/proc/self/uid_map", s, c, &n)) < 0)
                return tx_err(err, -r, "cannot read /proc/self/uid_map: %s", strerror(-r));
        for (size_t i = 0; i < n; i++)
                m->uid[i].start = s[i], m->uid[i].count = c[i];
        m->nuid = n;
        if ((r = read_own_map("/proc/self/gid_map", s, c, &n)) < 0)
                return tx_err(err, -r, "cannot read /proc/self/gid_map: %s", strerror(-r));
        for (size_t i = 0; i < n; i++)
                m->gid[i].start = s[i], m->gid[i].count = c[i];
        m->ngid = n;
        return 0;
}

static bool range_has(uint32_t start, uint32_t count, uint32_t id)
{
        return id >= start && (uint64_t)id < (uint64_t)start + count;
}

bool idmap_has_uid(const struct idmap *m, uid_t uid)
{
        for (size_t i = 0; i < m->nuid; i++)
                if (range_has(m->uid[i].start, m->uid[i].count, (uint32_t)uid))
                        return true;
        return false;
}

bool idmap_has_gid(const struct idmap *m, gid_t gid)
{
        for (size_t i = 0; i < m->ngid; i++)
                if (range_has(m->gid[i].start, m->gid[i].count, (uint32_t)gid))
                        return true;
        return false;
}

int sandbox_write_proc(pid_t pid, const char *file, const char *data)
{
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        ssize_t len = (ssize_t)strlen(data);
        return write(fd, data, (size_t)len) == len ? 0 : -errno;
}

static void format_map(char *buf, size_t size, const void *ranges, size_t n)
{
        const struct { uint32_t start, count; } *r = ranges;
        size_t off = 0;
        buf[0] = '\0';
        for (size_t i = 0; i < n && off < size; i++)
                off += (size_t)snprintf(buf + off, size - off, "%u %u %u\n", r[i].start,
                                        r[i].start, r[i].count);
}

int sandbox_write_idmaps(pid_t pid, const struct idmap *m, struct txbox_error *err)
{
        char buf[IDMAP_MAX * 40];
        int r;

        /* Unprivileged users must give up setgroups before writing a gid map. */
        if (!m->privileged && (r = sandbox_write_proc(pid, "setgroups", "deny")) < 0)
                return tx_err(err, -r, "cannot write /proc/%d/setgroups: %s", (int)pid, strerror(-r));
        format_map(buf, sizeof(buf), m->uid, m->nuid);
        if ((r = sandbox_write_proc(pid, "uid_map", buf)) < 0)
                return tx_err(err, -r, "cannot write the sandbox's uid map (%s): %s",
                              strtok(buf, "\n"), strerror(-r));
        format_map(buf, sizeof(buf), m->gid, m->ngid);
        if ((r = sandbox_write_proc(pid, "gid_map", buf)) < 0)
                return tx_err(err, -r, "cannot write the sandbox's gid map (%s): %s",
                              strtok(buf, "\n"), strerror(-r));
        return 0;
}

/* txbox doctor for one workspace: the kernel's protections probed where the workspace and
 * its state dir are (an overlay on their own filesystem, as a transaction makes it), and what
 * a container around txbox does to them: its seccomp profile, its security label, its user
 * namespace, its masks on /proc (docs/KUBERNETES.md). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/error.h"
#include "base/macros.h"
#include "base/mem.h"
#include "base/str.h"
#include "base/strv.h"
#include "policy/policy.h"
#include "sandbox/sandbox.h"
#include "txbox.h"
#include "txn/tx.h"

#define DOCTOR_MAX 32

static void __attribute__((format(printf, 6, 7)))
put(struct txbox_probe *p, const char *name, bool ok, bool essential, const char *cost, const char *fmt, ...)
{
        va_list ap;

        p->name = name;
        p->ok = ok;
        p->essential = essential;
        p->cost = ok ? NULL : cost;
        va_start(ap, fmt);
        vsnprintf(p->detail, sizeof(p->detail), fmt, ap);
        va_end(ap);
}

/* The first line of a small file, without its newline; false when unreadable. */
static bool read_line(const char *path, char *buf, size_t size)
{
        _cleanup_fclose_ FILE *f = fopen(path, "re");

        if (!f || !fgets(buf, (int)size, f))
                return false;
        buf[strcspn(buf, "\n")] = '\0';
        return true;
}

/* ---- the workspace's filesystem ---- */

#ifndef NFS_SUPER_MAGIC
#define NFS_SUPER_MAGIC 0x6969
#endif
#define XFS_MAGIC 0x58465342L
#define CIFS_MAGIC 0xff534d42L
#define SMB2_MAGIC 0xfe534d42L
#define FUSE_MAGIC 0x65735546L
#define CEPH_MAGIC 0x00c36400L
#define ZFS_MAGIC 0x2fc12fc1L
#define F2FS_MAGIC 0xf2f52010L
#define NINEP_MAGIC 0x01021997L

static const struct {
        long magic;
        const char *name;
        const char *warn; /* why txbox cannot use it well, or NULL */
} fs_types[] = {
        {EXT4_SUPER_MAGIC, "ext4", NULL},
        {XFS_MAGIC, "xfs", NULL},
        {BTRFS_SUPER_MAGIC, "btrfs", NULL},
        {TMPFS_MAGIC, "tmpfs", NULL},
        {F2FS_MAGIC, "f2fs", NULL},
        {ZFS_MAGIC, "zfs", NULL},
        {OVERLAYFS_SUPER_MAGIC, "overlay",
         "an overlay (a container's own root?) cannot hold the layers of txbox's overlay: put the workspace "
         "and "
         "the state dir on a volume (emptyDir or a PVC on ext4, xfs or tmpfs)"},
        {NFS_SUPER_MAGIC, "nfs",
         "NFS cannot hold an overlay's upper layer (no user xattrs, no whiteouts): use a block-backed "
         "volume"},
        {CIFS_MAGIC, "cifs", "SMB shares cannot hold an overlay's upper layer: use a block-backed volume"},
        {SMB2_MAGIC, "smb2", "SMB shares cannot hold an overlay's upper layer: use a block-backed volume"},
        {NINEP_MAGIC, "9p", "9p cannot hold an overlay's upper layer: use a block-backed volume"},
        {FUSE_MAGIC, "fuse",
         "FUSE filesystems rarely hold an overlay's upper layer; prefer a block-backed volume"},
        {CEPH_MAGIC, "ceph", "CephFS cannot hold an overlay's upper layer: use an RBD (block) volume"},
};

static void probe_fs(const char *ws, struct txbox_probe *p)
{
        struct statfs sf;

        if (statfs(ws, &sf) < 0) {
                put(p, "workspace filesystem", false, false, "txbox cannot tell", "statfs failed: %s",
                    strerror(errno));
                return;
        }
        for (size_t i = 0; i < ARRAY_SIZE(fs_types); i++)
                if ((long)sf.f_type == fs_types[i].magic) {
                        put(p, "workspace filesystem", !fs_types[i].warn, false, fs_types[i].warn, "%s",
                            fs_types[i].name);
                        return;
                }
        put(p, "workspace filesystem", true, false, NULL, "type 0x%lx", (long)sf.f_type);
}

/* ---- what the container does ---- */

static void probe_seccomp(struct txbox_probe *p)
{
        _cleanup_fclose_ FILE *f = fopen("/proc/self/status", "re");
        char line[256];
        int mode = -1, filters = -1;

        while (f && fgets(line, sizeof(line), f)) {
                sscanf(line, "Seccomp: %d", &mode);
                sscanf(line, "Seccomp_filters: %d", &filters);
        }
        if (mode < 0)
                put(p, "seccomp before txbox", true, false, NULL,
                    "unknown (no Seccomp line in /proc/self/status)");
        else if (mode == 0)
                put(p, "seccomp before txbox", true, false, NULL, "none (mode 0)");
        else
                put(p, "seccomp before txbox", true, false, NULL,
                    "mode %d, %d filter%s from the container runtime or a parent; txbox adds its own", mode,
                    filters, filters == 1 ? "" : "s");
}

/* The LSM label this process runs under: AppArmor's own file first (stacking kernels), then
 * the shared one, which is SELinux's where /sys/fs/selinux exists. */
static void probe_label(struct txbox_probe *p, bool broken)
{
        char label[128];
        const char *lsm = "AppArmor";

        if (!read_line("/proc/self/attr/apparmor/current", label, sizeof(label))) {
                if (!read_line("/proc/self/attr/current", label, sizeof(label))) {
                        put(p, "security label", true, false, NULL,
                            "none (no AppArmor or SELinux label on this process)");
                        return;
                }
                if (access("/sys/fs/selinux", F_OK) == 0)
                        lsm = "SELinux";
        }
        /* A confining profile is the usual suspect when mounts or user namespaces fail. */
        bool confined = strcmp(label, "unconfined") && !strstr(label, "(unconfined)") &&
                        !strstr(label, "(complain)") && !strstr(label, "unconfined_t") &&
                        !strstr(label, "spc_t");
        put(p, "security label", !(broken && confined), false,
            "the process runs confined and a mount or namespace probe failed: the profile may be what "
            "refuses them "
            "(AppArmor: load deploy/apparmor/txbox-agent; SELinux: see docs/KUBERNETES.md)",
            "%s '%.100s'", lsm, label);
}

static bool have_cap(int cap)
{
        struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
        struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {0};

        if (syscall(SYS_capget, &h, d) < 0)
                return false;
        return d[cap / 32].effective & (1u << (cap % 32));
}

static void probe_userns(struct txbox_probe *p)
{
        char map[128], max[32] = "?";
        unsigned long inside, outside, count;

        read_line("/proc/sys/user/max_user_namespaces", max, sizeof(max));
        if (!read_line("/proc/self/uid_map", map, sizeof(map)) ||
            sscanf(map, "%lu %lu %lu", &inside, &outside, &count) != 3) {
                put(p, "user namespace mapping", true, false, NULL,
                    "unknown (/proc/self/uid_map unreadable)");
                return;
        }
        /* Mapping root into the sandbox needs CAP_SETFCAP (Linux >= 5.12): root with every
         * capability dropped cannot, so txbox cannot run as that root. */
        if (geteuid() == 0 && !have_cap(CAP_SETFCAP) && !have_cap(CAP_SETUID)) {
                put(p, "user namespace mapping", false, true,
                    "txbox cannot run as root without capabilities (the kernel wants CAP_SETFCAP to map root "
                    "into the "
                    "sandbox): run it as a non-root user (Kubernetes: securityContext.runAsUser: 1000)",
                    "uid 0 without CAP_SETFCAP or CAP_SETUID");
                return;
        }
        if (inside == 0 && outside == 0 && count == 4294967295UL)
                put(p, "user namespace mapping", strcmp(max, "0") != 0, false,
                    "no user namespaces may be made (user.max_user_namespaces is 0)",
                    "the host's own (uid %u); max_user_namespaces %s", (unsigned)geteuid(), max);
        else
                put(p, "user namespace mapping", strcmp(max, "0") != 0, false,
                    "no user namespaces may be made (user.max_user_namespaces is 0)",
                    "a user namespace of its own: uid %lu-%lu is host uid %lu-%lu (hostUsers: false); uid %u "
                    "here; "
                    "max_user_namespaces %s",
                    inside, inside + count - 1, outside, outside + count - 1, (unsigned)geteuid(), max);
}

static void probe_container(struct txbox_probe *p)
{
        char cg[512] = "";
        const char *kind = NULL;

        read_line("/proc/1/cgroup", cg, sizeof(cg));
        if (getenv("KUBERNETES_SERVICE_HOST") || strstr(cg, "kubepods"))
                kind = "a Kubernetes pod";
        else if (access("/run/.containerenv", F_OK) == 0 || !strcmp(getenv("container") ?: "", "podman"))
                kind = "a podman container";
        else if (access("/.dockerenv", F_OK) == 0 || !strcmp(getenv("container") ?: "", "docker"))
                kind = "a docker container";
        else if (getenv("container"))
                kind = getenv("container");
        put(p, "container", true, false, NULL, "%s%.60s", kind ? "" : "none detected", kind ? kind : "");
}

/* ---- the state dir and where to probe ---- */

/* A fresh directory on the workspace's filesystem for the overlay probe: in the state dir or,
 * when that does not exist yet, in its closest existing ancestor (on the same mount: the
 * state dir was chosen so). */
static bool probe_dir(const char *state, char *out, size_t size)
{
        _cleanup_free_ char *p = xstrdup(state);
        struct stat st;

        while (stat(p, &st) < 0 || !S_ISDIR(st.st_mode)) {
                char *slash = strrchr(p, '/');
                if (!slash || slash == p)
                        return false;
                *slash = '\0';
        }
        snprintf(out, size, "%s/.txbox-doctor.XXXXXX", p);
        return mkdtemp(out) != NULL;
}

static void remove_probe_dir(const char *dir)
{
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        const char *const sub[] = {"w/work", "w/index", "l", "u", "w"};

        for (size_t i = 0; dfd >= 0 && i < ARRAY_SIZE(sub); i++)
                unlinkat(dfd, sub[i], AT_REMOVEDIR);
        rmdir(dir);
}

TXBOX_API int txbox_doctor_at(const char *workspace, const char *state_opt, struct txbox_probe *out,
                              size_t max)
{
        struct txbox_probe all[DOCTOR_MAX];
        struct txbox_error err = {0};
        _cleanup_free_ char *state = NULL;
        char ws[PATH_MAX], dir[PATH_MAX] = "";
        int n = 0;

        if (!workspace || !realpath(workspace, ws)) {
                put(&all[n++], "workspace", false, true,
                    "txbox has nothing to work on: pass -C DIR with an existing directory", "'%.100s': %s",
                    workspace ? workspace : "", workspace ? strerror(errno) : "none given");
                n += sandbox_doctor(NULL, NULL, all + n, DOCTOR_MAX - (size_t)n - 6);
        } else {
                bool have_state = ws_choose_state(ws, state_opt, &state, &err) == 0;
                put(&all[n++], "state dir", have_state, true,
                    "txbox cannot run here: pass --state DIR (or set XDG_STATE_HOME) to a directory on the "
                    "workspace's "
                    "mount, outside it (in a pod: the workspace and the state dir as two directories of one "
                    "volume)",
                    "%.150s", have_state ? state : err.msg);
                bool here = have_state && probe_dir(state, dir, sizeof(dir));
                n += sandbox_doctor(here ? dir : NULL, here ? ws : NULL, all + n, DOCTOR_MAX - (size_t)n - 6);
                if (here)
                        remove_probe_dir(dir);
                probe_fs(ws, &all[n++]);
        }
        bool broken = false;
        for (int i = 0; i < n; i++)
                broken |= !all[i].ok && all[i].essential;
        probe_userns(&all[n++]);
        probe_seccomp(&all[n++]);
        probe_label(&all[n++], broken);
        probe_container(&all[n++]);
        for (int i = 0; i < n && (size_t)i < max; i++)
                out[i] = all[i];
        return n < (int)max ? n : (int)max;
}

/* ---- the home's view ---- */

/* path as ~/REST when under home. */
static char *tilde(const char *path, const char *home)
{
        if (home && path_is_within(path, home) && strcmp(home, "/"))
                return xasprintf("~%s", path + strlen(home));
        return xstrdup(path);
}

TXBOX_API int txbox_home_view(const char *workspace, const char *state_opt, const char *policy_file,
                              struct txbox_home_view *out, struct txbox_error *err)
{
        struct policy *pol = NULL;
        struct tx_home h;
        struct strvec hidden = {0};
        struct sandbox_caches c;
        struct txbox_error e2 = {0};
        _cleanup_free_ char *state = NULL;
        const char *home = ws_home_dir();
        char ws[PATH_MAX];
        int r;

        memset(out, 0, sizeof(*out));
        if (!workspace || !realpath(workspace, ws))
                return tx_err(err, errno ? errno : EINVAL, "workspace '%s': %s", workspace ? workspace : "",
                              strerror(errno ? errno : EINVAL));
        if ((r = policy_load_for(ws, policy_file, &pol, err)) < 0)
                return r;
        tx_home_config(ws, pol, &h);
        ws_choose_state(ws, state_opt, &state, &e2);
        sandbox_hidden_paths(home, ws, h.hide.v, &hidden);
        out->hidden = xcalloc(hidden.n + 1, sizeof(*out->hidden));
        for (size_t i = 0; i < hidden.n; i++) {
                struct stat st;
                out->hidden[i].path = tilde(hidden.v[i], home);
                out->hidden[i].active = lstat(hidden.v[i], &st) == 0;
        }
        out->nhidden = hidden.n;
        if (h.cache_off)
                out->caches_off = xstrdup(h.cache_off);
        else {
                sandbox_caches_plan(h.cache_root, h.cache_list ? h.caches.v : NULL, home, ws, state, hidden.v,
                                    false, &c);
                out->cache_root = xstrdup_or_null(c.root);
                out->caches_off = xstrdup_or_null(c.off);
                out->caches = xcalloc(c.n + 1, sizeof(*out->caches));
                for (size_t i = 0; i < c.n; i++) {
                        const struct sandbox_cache *e = &c.v[i];
                        struct txbox_home_entry *o = &out->caches[out->ncaches++];
                        o->path = xasprintf("~/%s", e->rel);
                        o->active = e->mounted;
                        _cleanup_free_ char *want = xasprintf("%s/%s", home, e->rel);
                        struct stat st;
                        if (e->mounted && stat(e->target, &st) < 0)
                                o->detail = xstrdup("made and mounted at the first run");
                        else if (e->mounted && !strcmp(e->target, want))
                                o->detail = xstrdup("mounted");
                        else if (e->mounted) {
                                _cleanup_free_ char *t = tilde(e->target, home);
                                o->detail = xasprintf("mounted at %s", t);
                        } else if (e->redirected) {
                                _cleanup_free_ char *v = e->env ? tilde(strchr(e->env, '=') + 1, home) : NULL;
                                o->detail = e->env ? xasprintf("%s; %.*s=%s instead", e->why,
                                                               (int)(strchr(e->env, '=') - e->env), e->env, v)
                                                   : xasprintf("%s; its tool's variable is set instead", e->why);
                        } else
                                o->detail = xstrdup(e->why);
                }
                sandbox_caches_free(&c);
        }
        strvec_clear(&hidden);
        tx_home_clear(&h);
        policy_free(pol);
        return 0;
}

TXBOX_API void txbox_home_view_free(struct txbox_home_view *v)
{
        if (!v)
                return;
        for (size_t i = 0; i < v->ncaches; i++) {
                free(v->caches[i].path);
                free(v->caches[i].detail);
        }
        for (size_t i = 0; i < v->nhidden; i++)
                free(v->hidden[i].path);
        free(v->caches);
        free(v->hidden);
        free(v->cache_root);
        free(v->caches_off);
        memset(v, 0, sizeof(*v));
}

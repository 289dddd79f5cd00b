/* Real overlay upper layers for unit tests.
 *
 * ovl_new() makes <root>/<name>/{L,U,W,M}; the test fills L (the "live workspace"), then
 * ovl_run() forks a child that enters a new user+mount namespace (mapping only the caller's
 * own uid and gid, so it works as root and unprivileged), mounts
 * overlay(lowerdir=L, upperdir=U, workdir=W, userxattr) on M, runs a scenario with M as its
 * working directory and exits.  The upper layer U is then exactly what the kernel made. */
#ifndef TXBOX_OVL_HELPER_H
#define TXBOX_OVL_HELPER_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

struct ovl {
        char *lower, *upper, *work, *mnt; /* absolute paths, malloc'd */
        int lower_fd, upper_fd;
};

static char ovl_root[PATH_MAX];

/* In a scenario: stop the child with a message when a step fails. */
#define CHK(x)                                                                          \
        do {                                                                            \
                if (!(x)) {                                                             \
                        fprintf(stderr, "# scenario step failed: %s: %s\n", #x,         \
                                strerror(errno));                                       \
                        _exit(1);                                                       \
                }                                                                       \
        } while (0)

static int ovl_setup_root(void)
{
        const char *tmp = getenv("TMPDIR");
        snprintf(ovl_root, sizeof(ovl_root), "%s/txbox-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        return mkdtemp(ovl_root) ? 0 : -errno;
}

/* Remove the whole temp root; overlay leaves work/work with mode 0, so make it ours first. */
static void ovl_cleanup_root(void)
{
        char *cmd = NULL;
        if (!ovl_root[0])
                return;
        if (asprintf(&cmd, "chmod -R u+rwX '%s' && rm -rf '%s'", ovl_root, ovl_root) < 0 ||
            system(cmd) != 0)
                fprintf(stderr, "# could not remove %s\n", ovl_root);
        free(cmd);
}

static char *ovl_sub(const char *dir, const char *name)
{
        char *s = NULL;
        if (asprintf(&s, "%s/%s", dir, name) < 0)
                abort();
        return s;
}

/* Make <root>/<name>/{L,U,W,M} and open L and U. */
static int ovl_new(struct ovl *o, const char *name)
{
        char *dir = ovl_sub(ovl_root, name);
        int r = mkdir(dir, 0755);

        o->lower = ovl_sub(dir, "L");
        o->upper = ovl_sub(dir, "U");
        o->work = ovl_sub(dir, "W");
        o->mnt = ovl_sub(dir, "M");
        free(dir);
        o->lower_fd = o->upper_fd = -1;
        if (r < 0 || mkdir(o->lower, 0755) < 0 || mkdir(o->upper, 0755) < 0 ||
            mkdir(o->work, 0755) < 0 || mkdir(o->mnt, 0755) < 0)
                return -errno;
        o->lower_fd = open(o->lower, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        o->upper_fd = open(o->upper, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return o->lower_fd < 0 || o->upper_fd < 0 ? -errno : 0;
}

/* Write text to dirfd/path (created 0644 or truncated); 0 or -1 with errno. */
static int ovl_put_at(int dirfd, const char *path, const char *text)
{
        int fd = openat(dirfd, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ssize_t n = fd < 0 ? -1 : write(fd, text, strlen(text));
        if (fd < 0 || n != (ssize_t)strlen(text)) {
                if (fd >= 0)
                        close(fd);
                return -1;
        }
        return close(fd);
}

static int ovl_put(const char *path, const char *text) { return ovl_put_at(AT_FDCWD, path, text); }

static void ovl_enter(const struct ovl *o)
{
        char map[64], *opts = NULL;
        uid_t uid = getuid();
        gid_t gid = getgid();
        int fd;

        CHK(unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0);
        fd = open("/proc/self/setgroups", O_WRONLY | O_CLOEXEC);
        CHK(fd >= 0 && write(fd, "deny", 4) == 4 && close(fd) == 0);
        snprintf(map, sizeof(map), "%u %u 1", (unsigned)uid, (unsigned)uid);
        fd = open("/proc/self/uid_map", O_WRONLY | O_CLOEXEC);
        CHK(fd >= 0 && write(fd, map, strlen(map)) == (ssize_t)strlen(map) && close(fd) == 0);
        snprintf(map, sizeof(map), "%u %u 1", (unsigned)gid, (unsigned)gid);
        fd = open("/proc/self/gid_map", O_WRONLY | O_CLOEXEC);
        CHK(fd >= 0 && write(fd, map, strlen(map)) == (ssize_t)strlen(map) && close(fd) == 0);
        CHK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
        CHK(asprintf(&opts, "lowerdir=%s,upperdir=%s,workdir=%s,userxattr", o->lower, o->upper,
                     o->work) > 0);
        CHK(mount("overlay", o->mnt, "overlay", 0, opts) == 0);
        free(opts);
        CHK(chdir(o->mnt) == 0);
}

/* Run scenario fn on the overlay.  0 on success. */
static int ovl_run(struct ovl *o, void (*fn)(void))
{
        int status;
        pid_t pid;

        fflush(NULL);
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                ovl_enter(o);
                fn();
                fflush(NULL);
                _exit(0);
        }
        if (waitpid(pid, &status, 0) < 0)
                return -errno;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -ECHILD;
}

static void ovl_close(struct ovl *o)
{
        if (o->lower_fd >= 0)
                close(o->lower_fd);
        if (o->upper_fd >= 0)
                close(o->upper_fd);
        o->lower_fd = o->upper_fd = -1;
        free(o->lower);
        free(o->upper);
        free(o->work);
        free(o->mnt);
        o->lower = o->upper = o->work = o->mnt = NULL;
}

#endif

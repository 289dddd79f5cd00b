/* Raw system calls that glibc 2.36 does not wrap.  Each sets errno = ENOSYS when the
 * kernel headers do not know the number. */
#ifndef TXBOX_SYSCALLS_H
#define TXBOX_SYSCALLS_H

#include <errno.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline int sys_openat2(int dirfd, const char *path, struct open_how *how, size_t size)
{
#ifdef SYS_openat2
        return (int)syscall(SYS_openat2, dirfd, path, how, size);
#else
        errno = ENOSYS;
        return -1;
#endif
}

static inline int sys_mount_setattr(int dirfd, const char *path, unsigned flags,
                                    struct mount_attr *attr, size_t size)
{
#ifdef SYS_mount_setattr
        return (int)syscall(SYS_mount_setattr, dirfd, path, flags, attr, size);
#else
        errno = ENOSYS;
        return -1;
#endif
}

static inline int sys_fsopen(const char *fsname, unsigned flags)
{
        return (int)syscall(SYS_fsopen, fsname, flags);
}

static inline int sys_fsconfig(int fd, unsigned cmd, const char *key, const void *value, int aux)
{
        return (int)syscall(SYS_fsconfig, fd, cmd, key, value, aux);
}

static inline int sys_fsmount(int fd, unsigned flags, unsigned attr_flags)
{
        return (int)syscall(SYS_fsmount, fd, flags, attr_flags);
}

static inline int sys_move_mount(int from_dfd, const char *from_path, int to_dfd,
                                 const char *to_path, unsigned flags)
{
        return (int)syscall(SYS_move_mount, from_dfd, from_path, to_dfd, to_path, flags);
}

static inline int sys_open_tree(int dfd, const char *path, unsigned flags)
{
        return (int)syscall(SYS_open_tree, dfd, path, flags);
}

static inline int sys_pidfd_open(pid_t pid, unsigned flags)
{
        return (int)syscall(SYS_pidfd_open, pid, flags);
}

static inline int sys_close_range(unsigned first, unsigned last, unsigned flags)
{
        return (int)syscall(SYS_close_range, first, last, flags);
}

#endif

/* The program's connect(2)s, made by the supervisor (seccomp user notification): unix
 * sockets of the sandbox's own /tmp and /dev/shm are reachable, those of the host are not. */
#ifndef TXBOX_SOCKCONN_H
#define TXBOX_SOCKCONN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/seccomp.h>

#define SOCKCONN_PENDING_MAX 64 /* blocking connects waited for at once */

struct sockconn_pending {
        uint64_t id; /* the notification, answered when the connect completes */
        int sock;    /* our copy of the program's socket */
        int pin;     /* unix: the socket file, pinned (retried while its backlog is full); inet: -1 */
        bool used;
};

struct sockconn {
        bool own_net;    /* the program's sockets live in a network namespace of the sandbox's own */
        bool devs_known; /* tmp_dev, shm_dev looked up (at the first unix connect) */
        dev_t tmp_dev, shm_dev;
        int epfd; /* pending inet connects (EPOLLOUT); -1 until there is one */
        struct sockconn_pending pend[SOCKCONN_PENDING_MAX];
        size_t npend;
        unsigned refused;       /* connects to a unix socket outside the sandbox, refused */
        char refused_path[112]; /* the first one's path */
};

/* Can the supervisor take a program's socket here (pidfd_getfd, Yama's ptrace scope)?
 * Without it, unix sockets stay refused as before (seccomp). */
bool sockconn_available(void);
void sockconn_init(struct sockconn *c, bool own_net);
void sockconn_free(struct sockconn *c);
/* Is notification n a connect (connect, or socketcall's SYS_CONNECT on 32-bit x86)? */
bool sockconn_is_connect(const struct seccomp_notif *n);
/* Answer the connect notification n received on listener: made by us, refused, or left
 * pending until it completes (a blocking connect).  0, or -errno when the listener is
 * unusable. */
int sockconn_handle(struct sockconn *c, int listener, const struct seccomp_notif *n);
/* Descriptor to poll for pending connects (-1: none yet), and the work when it is readable
 * or a while has passed: complete what has completed, retry unix sockets whose backlog was
 * full, forget connects their program gave up. */
int sockconn_fd(const struct sockconn *c);
void sockconn_service(struct sockconn *c, int listener);
/* Is a unix connect waiting for a backlog (retried by sockconn_service, not woken by fd)? */
bool sockconn_retrying(const struct sockconn *c);

#endif

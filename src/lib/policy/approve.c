/* The approval channel for "ask" decisions: a program the user configured decides. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>

#include "base/cleanup.h"
#include "base/clock.h"
#include "policy/policy.h"

extern char **environ;

#define APPROVE_TIMEOUT_MS 60000

static char *decision_json(const struct policy_result *res, const char *workspace)
{
        json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s?}", "decision", policy_decision_name(res->decision),
                              "rule", res->rule, "reason", res->reason, "command", res->command,
                              "workspace", workspace);
        char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
        json_decref(o);
        return s;
}

/* Read the program's answer, at most size-1 bytes, within the timeout. */
static void read_answer(int fd, char *buf, size_t size)
{
        size_t n = 0;
        int64_t deadline = mono_us() + (int64_t)APPROVE_TIMEOUT_MS * 1000;
        while (n + 1 < size) {
                struct pollfd p = {.fd = fd, .events = POLLIN};
                int left = (int)((deadline - mono_us()) / 1000);
                if (left <= 0 || poll(&p, 1, left) <= 0)
                        break;
                ssize_t r = read(fd, buf + n, size - 1 - n);
                if (r <= 0)
                        break;
                n += (size_t)r;
        }
        buf[n] = '\0';
}

int policy_ask_approver(const char *program, const struct policy_result *res, const char *workspace)
{
        int in[2] = {-1, -1}, out[2] = {-1, -1};
        char answer[64] = "", *argv[] = {(char *)program, NULL};
        _cleanup_free_ char *json = decision_json(res, workspace);
        posix_spawn_file_actions_t fa;
        pid_t pid;
        int r = -1;

        if (!program || !json || pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0)
                goto out;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, in[0], 0);
        posix_spawn_file_actions_adddup2(&fa, out[1], 1);
        r = posix_spawnp(&pid, program, &fa, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        closep(&in[0]);
        closep(&out[1]);
        if (r != 0)
                goto out;
        /* SIGPIPE would kill us if the program does not read its input: write with it ignored. */
        struct sigaction ign = {.sa_handler = SIG_IGN}, old;
        sigaction(SIGPIPE, &ign, &old);
        if (write(in[1], json, strlen(json)) < 0 || write(in[1], "\n", 1) < 0) {
                /* it may decide without reading */
        }
        sigaction(SIGPIPE, &old, NULL);
        closep(&in[1]);
        read_answer(out[0], answer, sizeof(answer));
        kill(pid, SIGKILL); /* no-op when it has exited; ends a program that hangs */
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
        r = 0;
out:
        for (int i = 0; i < 2; i++) {
                closep(&in[i]);
                closep(&out[i]);
        }
        if (r != 0)
                return 0;
        return !strncmp(answer, "allow", 5) && (answer[5] == '\0' || answer[5] == '\n' || answer[5] == ' ');
}

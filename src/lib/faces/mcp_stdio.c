/* The MCP server's stdio loop (mcp_serve): lines read into a bounded queue, each answered by
 * mcp_handle in turn; the id of an over-long line found without keeping the line; and, while a
 * command runs, the watch that answers pings, takes cancellations and notices a client gone.
 * Apart from the protocol (mcp.c) because none of it is needed to handle one message. */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "base/mem.h"
#include "faces/mcp_int.h"
#include "store/record.h"
#include "txn/tx.h"

/* An over-long line cannot be parsed, but its answer must carry its id, or the client waits
 * for an answer that never comes.  The id is found by a scan that keeps no more than the id
 * itself: the top-level object's "id" member, wherever it is in the line. */
#define ID_MAX 256
struct id_scan {
        int depth;
        bool in_str, esc, want_key, in_key, is_id, capture, overflow, dup;
        char key[4];
        size_t klen;
        char val[ID_MAX];
        size_t vlen;
        json_t *id;
};

static void idscan_keep(struct id_scan *z, char c)
{
        if (z->vlen < sizeof(z->val))
                z->val[z->vlen++] = c;
        else
                z->overflow = true;
}

static void idscan_end(struct id_scan *z)
{
        json_t *v = z->overflow ? NULL : json_loadb(z->val, z->vlen, JSON_DECODE_ANY, NULL);

        z->capture = false;
        if (v && mcp_id_valid(v) && !z->id && !z->dup)
                z->id = json_incref(v);
        else if (z->id) /* a second "id": which one the client meant is unknowable */
                z->dup = true;
        json_decref(v);
}

static void idscan(struct id_scan *z, const char *p, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                char c = p[i];
                if (z->in_str) {
                        bool closing = !z->esc && c == '"';
                        z->esc = !z->esc && c == '\\';
                        if (z->capture)
                                idscan_keep(z, c);
                        else if (z->in_key && !closing && z->klen++ < sizeof(z->key))
                                z->key[z->klen - 1] = c;
                        if (closing && z->in_key) {
                                z->in_key = false;
                                z->is_id = z->klen == 2 && !memcmp(z->key, "id", 2);
                        }
                        z->in_str = !closing;
                        continue;
                }
                bool member_end = z->depth == 1 && (c == ',' || c == '}');
                if (member_end && z->capture)
                        idscan_end(z);
                else if (z->capture && !strchr(" \t\r\n", c))
                        idscan_keep(z, c);
                switch (c) {
                case '{': z->want_key = ++z->depth == 1; break;
                case '[': z->depth++; break;
                case '}': case ']': z->depth--; break;
                case ',': z->want_key = z->depth == 1; break;
                case ':':
                        z->capture = z->depth == 1 && z->is_id;
                        z->is_id = false;
                        z->vlen = 0;
                        z->overflow = false;
                        break;
                case '"':
                        z->in_str = true;
                        z->in_key = z->depth == 1 && z->want_key;
                        z->klen = 0;
                        z->want_key = false;
                        break;
                }
        }
}

/* The id of an over-long line, or NULL (json null) when it had none or it was unclear. */
static json_t *idscan_take(struct id_scan *z)
{
        json_t *id = z->dup ? NULL : z->id;
        if (z->dup)
                json_decref(z->id);
        memset(z, 0, sizeof(*z));
        return id;
}

/* A complete line not yet handled. */
struct msg {
        char *buf;
        size_t len;
        bool too_long;  /* over the cap: its bytes are gone, id keeps its id */
        bool scanned;   /* looked at by mcp_urgent */
        json_t *id;     /* a request's id (too long, or once scanned) */
};

#define QUEUE_MAX 256
#define QUEUE_BYTES (64u * 1024 * 1024)

struct mcp_io {
        struct mcp_server *s;
        int in_fd, out_fd;
        char *buf; /* the line being read */
        size_t len, cap, max;
        bool too_long;
        struct id_scan scan;
        struct msg q[QUEUE_MAX];
        size_t nq, qbytes;
        char chunk[4096]; /* read but not yet split into lines */
        size_t coff, clen;
        bool eof;  /* stdin ended */
        bool gone; /* the client is gone, or a signal ends the server: answer nothing more */
        int err;   /* a read or write failed (-errno) */
        struct txbox_watch watch;
};

static int write_line(int fd, const char *line)
{
        size_t len = strlen(line), off = 0;

        while (off <= len) {
                /* the line, then its newline: two writes keep the buffer untouched */
                const char *p = off < len ? line + off : "\n";
                size_t n = off < len ? len - off : 1;
                ssize_t w = write(fd, p, n);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0)
                        return -errno;
                off += (size_t)w;
        }
        return 0;
}

static void send_line(struct mcp_io *io, char *line)
{
        int r = line && !io->err ? write_line(io->out_fd, line) : 0;
        if (r < 0) {
                io->err = r;
                io->gone = true; /* nobody reads our answers any more */
        }
        free(line);
}

static void msg_free(struct msg *m)
{
        free(m->buf);
        json_decref(m->id);
}

static void queue_drop(struct mcp_io *io, size_t i)
{
        io->qbytes -= io->q[i].len;
        msg_free(&io->q[i]);
        memmove(io->q + i, io->q + i + 1, (io->nq - i - 1) * sizeof(io->q[0]));
        io->nq--;
}

/* The line just read is complete: queue it (the buffer moves into the queue). */
static void line_done(struct mcp_io *io)
{
        struct msg m = {.too_long = io->too_long};

        if (io->too_long) {
                m.id = idscan_take(&io->scan);
        } else if (io->len) {
                m.buf = io->buf, m.len = io->len;
                io->buf = NULL, io->cap = 0;
        }
        io->len = 0;
        io->too_long = false;
        if (!m.buf && !m.too_long)
                return; /* an empty line */
        io->q[io->nq++] = m; /* room was made before reading (queue_full) */
        io->qbytes += m.len;
}

static void take(struct mcp_io *io, const char *p, size_t n)
{
        if (!n)
                return;
        if (!io->too_long && io->len + n > io->max) {
                io->too_long = true;
                idscan(&io->scan, io->buf, io->len); /* the line so far, then the rest as it comes */
                io->len = 0;
        }
        if (io->too_long) {
                idscan(&io->scan, p, n);
                return;
        }
        if (io->len + n > io->cap) {
                io->cap = io->len + n > 2 * io->cap ? io->len + n : 2 * io->cap;
                io->buf = xrealloc(io->buf, io->cap);
        }
        memcpy(io->buf + io->len, p, n);
        io->len += n;
}

/* While a command runs, the client may send more than can wait: then it waits (its writes
 * block) until the command is done. */
static bool queue_full(const struct mcp_io *io)
{
        return io->nq >= QUEUE_MAX || io->qbytes > QUEUE_BYTES;
}

/* Split what was read into lines while the queue has room; then read once more from the
 * client when nothing is left over. */
static void fill(struct mcp_io *io)
{
        ssize_t n;

        if (io->coff == io->clen && !io->eof) {
                while ((n = read(io->in_fd, io->chunk, sizeof(io->chunk))) < 0 && errno == EINTR)
                        ;
                if (n <= 0) { /* end of input: a last line without its newline still counts */
                        if (n < 0)
                                io->err = -errno;
                        if (io->len || io->too_long)
                                line_done(io);
                        io->eof = true;
                        return;
                }
                io->coff = 0, io->clen = (size_t)n;
        }
        while (io->coff < io->clen && io->nq < QUEUE_MAX) {
                char *p = io->chunk + io->coff, *end = io->chunk + io->clen;
                char *nl = memchr(p, '\n', (size_t)(end - p));
                take(io, p, (size_t)((nl ? nl : end) - p));
                if (nl)
                        line_done(io);
                io->coff = (size_t)((nl ? nl + 1 : end) - io->chunk);
        }
}

/* What a queued line is, parsed once. */
enum msg_kind { MSG_OTHER, MSG_PING, MSG_CANCEL };

static enum msg_kind msg_classify(struct msg *m, json_t **cancel_id)
{
        /* (a ping stays unscanned: it is looked at again while a command runs) */
        json_t *j = m->too_long ? NULL : json_loadb(m->buf, m->len, JSON_REJECT_DUPLICATES, NULL);
        const char *method = json_string_value(json_object_get(j, "method"));
        json_t *id = json_object_get(j, "id");
        enum msg_kind k = MSG_OTHER;

        if (method && id && mcp_id_valid(id) && !strcmp(method, "ping") && !json_object_get(j, "params"))
                k = MSG_PING;
        else if (method && !id && !strcmp(method, "notifications/cancelled"))
                k = MSG_CANCEL;
        m->scanned = k != MSG_PING;
        if (method && id && mcp_id_valid(id) && !m->id)
                m->id = json_incref(id);
        *cancel_id = k == MSG_CANCEL ? json_incref(json_object_get(json_object_get(j, "params"), "requestId"))
                                     : NULL;
        json_decref(j);
        return k;
}

/* Handle what cannot wait for the running request: cancellations of queued requests drop
 * them, and, while a command runs (pings), pings are answered.  Returns true when the
 * running request was cancelled. */
bool mcp_urgent(struct mcp_server *s, bool pings)
{
        struct mcp_io *io = s->io;
        bool cancel = false;

        for (size_t i = 0; io && i < io->nq;) {
                json_t *target = NULL;
                enum msg_kind k = io->q[i].scanned ? MSG_OTHER : msg_classify(&io->q[i], &target);
                if (k == MSG_PING && !pings) {
                        i++;
                        continue;
                }
                if (k == MSG_PING) {
                        send_line(io, mcp_rpc_reply(io->q[i].id, jv_nonnull(json_object()), NULL));
                        queue_drop(io, i);
                        continue;
                }
                if (k == MSG_CANCEL) {
                        queue_drop(io, i);
                        if (target && s->current_id && json_equal(target, s->current_id))
                                cancel = true;
                        for (size_t j = 0; target && j < io->nq; j++)
                                if (io->q[j].id && json_equal(io->q[j].id, target)) {
                                        queue_drop(io, j); /* cancelled before it started: no answer */
                                        if (j < i)
                                                i--;
                                        break;
                                }
                        json_decref(target);
                        continue;
                }
                i++;
        }
        return cancel;
}

/* The watch while a command runs: the client's messages, and whether it is still there. */
static int on_watch(struct txbox_watch *w, short revents)
{
        struct mcp_io *io = (struct mcp_io *)((char *)w - offsetof(struct mcp_io, watch));

        if (w->fd == io->out_fd) { /* stdin ended earlier: only a reader gone matters now */
                if (revents & (POLLERR | POLLHUP))
                        io->gone = true;
                return io->gone;
        }
        if (!queue_full(io))
                fill(io);
        if (io->eof) {
                /* stdin closed: the client is gone when nobody reads stdout either; else it
                 * has only finished writing, and what it sent is still answered. */
                struct pollfd p = {.fd = io->out_fd};
                if (poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP)))
                        io->gone = true;
        }
        bool cancel = io->gone || mcp_urgent(io->s, true);
        if (io->eof || queue_full(io)) { /* nothing more to read now: watch the reader (and
                                           * stop watching stdin, which would poll readable) */
                w->fd = io->out_fd;
                w->events = 0;
        }
        return cancel;
}

struct txbox_watch *mcp_watch(struct mcp_server *s)
{
        if (!s->io)
                return NULL;
        s->io->watch = (struct txbox_watch){.fd = s->io->eof ? s->io->out_fd : s->io->in_fd,
                                            .events = s->io->eof ? 0 : POLLIN, .fn = on_watch};
        return &s->io->watch;
}

void mcp_cancelled_by(struct mcp_server *s, int signo)
{
        if (signo && s->io) {
                mcp_log(s, "signal %d: the command was rolled back; the server ends", signo);
                s->io->gone = true;
        }
}

static void answer(struct mcp_server *s, struct msg *m)
{
        if (m->too_long) {
                char text[128];
                snprintf(text, sizeof(text), "message too large: the limit is %zu bytes", s->io->max);
                mcp_log(s, "%s", text);
                send_line(s->io, mcp_rpc_error_reply(m->id, MCP_INVALID_REQUEST, text));
        } else {
                send_line(s->io, mcp_handle(s, m->buf, m->len));
        }
        /* The next command's sandbox gets ready while the client reads this answer (and its
         * model thinks): started before the answer, it would delay it. */
        if (s->prepare && s->ws && !s->io->gone) {
                s->prepare = false;
                ws_prepare_upto(s->ws, &s->prepare_opts, WS_PREPARED_MAX);
        }
}

int mcp_serve(struct mcp_server *s, int in_fd, int out_fd)
{
        struct mcp_io io = {.s = s, .in_fd = in_fd, .out_fd = out_fd};

        io.max = s->opts.max_message ? s->opts.max_message : MCP_MAX_MESSAGE;
        s->io = &io;
        while (!io.gone) {
                if (!io.nq) {
                        if (io.eof)
                                break;
                        fill(&io);
                        continue;
                }
                struct msg m = io.q[0];
                io.qbytes -= m.len;
                memmove(io.q, io.q + 1, --io.nq * sizeof(io.q[0]));
                answer(s, &m);
                msg_free(&m);
        }
        while (io.nq)
                queue_drop(&io, 0);
        json_decref(idscan_take(&io.scan));
        free(io.buf);
        s->io = NULL;
        return io.err == -EPIPE || (io.gone && !io.err) ? 0 : io.err;
}

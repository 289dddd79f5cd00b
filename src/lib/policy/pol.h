/* Private to the policy engine: the simple commands a shell string would run (parse.c),
 * the unwrapping of wrappers and interpreters (unwrap.c, code.c), rules (default.yml,
 * compiled by scripts/policygen.c; load.c) and matching (match.c). */
#ifndef TXBOX_POLICY_POL_H
#define TXBOX_POLICY_POL_H

#include "base/strvec.h"
#include "policy/policy.h"

#include <stdint.h>
#include <string.h>

/* Marks text whose value cannot be known before the command runs ($x, $(...) output ...).
 * It never occurs in a real argument: NUL cannot, and \001 is refused by the lexer. */
#define UNK '\001'
#define UNK_S "\001"

/* Limits: a pre-tool hook must answer in bounded time whatever an agent sends. */
#define POL_MAX_INPUT (256 * 1024) /* bytes of one shell string */
#define POL_MAX_DEPTH 24           /* nesting of $(...), sh -c, eval, interpreters ... */
#define POL_MAX_CMDS 4096          /* simple commands judged for one input */
#define POL_MAX_WORDS 4096         /* words in one simple command */
/* Arguments of one exec judged at run time: xargs and find -exec {} + pass up to the
 * kernel's ARG_MAX (2 MiB) of them, and every one must be seen. */
#define POL_MAX_ARGV (1 << 18)
#define POL_MAX_VARS 256           /* shell variables tracked */
#define POL_MAX_US 250000          /* wall time for one decision */
#define POL_MAX_INLINES 64         /* function calls re-read with their arguments */
#define POL_MAX_FILE (1024 * 1024) /* bytes of a policy file */
#define POL_MAX_FUNCS 1024         /* functions defined in one string */
#define POL_MAX_FLAG 64            /* bytes of a flag a rule can name, with its NUL */
/* Bytes the parser copies beyond its input (expanded values, function bodies ...). */
#define POL_MAX_COPIED (1024 * 1024)

/* One simple command that would run (after wrappers were peeled off, each layer is its own
 * scmd).  Programs starting with '@' are synthetic findings (download piped to a shell, a
 * reverse shell, a parse error ...) that rules match like programs. */
struct scmd {
        struct strvec argv;   /* expanded words; UNK marks unknown text */
        struct strvec writes; /* redirection targets opened for writing */
        struct strvec reads;  /* redirection targets opened for reading */
        char *text;           /* its source text (or the rendered argv) */
        int offset;           /* byte offset in the top-level input; -1 for argv */
        int pipe_id, stage;   /* pipeline membership: stage 0 is the leftmost */
        struct strvec clobbers; /* ... of them, those it truncates (>, not >>) */
        char *stdin_text;     /* heredoc / here-string / echoed literal feeding it */
        char *cwd;            /* where relative paths start: NULL the context's, UNK_S unknown */
        bool dl_word;         /* an argument holds the output of a downloader */
        bool help;            /* asks only for --help or --version: runs nothing else */
};

/* Where a parsed string sits in the top-level input. */
struct srcpos {
        int base;      /* offset of the string in the input, when direct */
        bool direct;   /* the string is a slice of the input (else: derived, e.g. sh -c ARG) */
        int outer_off; /* for derived strings: the offset of the command that carried it */
};

/* Work the unwrapper leaves for the walker (walk.c) instead of calling the parser or
 * itself: a command to unwrap (text NULL) or a shell string to parse (owned). */
struct work {
        size_t idx;
        char *text;
        struct srcpos pos;
        int depth;
};

struct scan {
        struct scmd *cmds;
        size_t n, cap;
        const struct policy_ctx *ctx;
        int64_t deadline_us;
        int next_pipe;
        int inlines; /* function calls parsed again with their arguments */
        size_t copied; /* bytes counted against POL_MAX_COPIED */
        int reparses;  /* loop bodies read again (parse.c) */
        bool forget;   /* a file was sourced or a string evaluated apart: variables unknown */
        bool failed; /* a limit was exceeded or parsing failed: fail closed */
        /* Files this input writes before it runs them: downloaded (the path) or written
         * with known text (path, then the text), judged when a later command runs them. */
        struct strvec dl_files;
        struct strvec text_files;
        /* Pending work, a stack (walk.c), and the bytes of its texts (POL_MAX_COPIED). */
        struct work *work;
        size_t nwork, capwork, work_bytes;
        /* The parser's sink, set by the walker: a simple command it has just read (idx) is
         * unwrapped with all it runs before the parser reads on. */
        void (*on_command)(struct scan *sc, size_t idx, int depth);
};

void scan_init(struct scan *sc, const struct policy_ctx *ctx);
void scan_free(struct scan *sc);
/* Add a simple command (takes ownership of argv's strings); returns it, or NULL when the
 * command limit is reached (sc->failed is then set and an @limit-exceeded finding added). */
struct scmd *scan_add(struct scan *sc, struct strvec *argv, const char *text, int offset);
/* Add a synthetic finding "@name" with one detail argument. */
void scan_finding(struct scan *sc, const char *name, const char *detail, const char *text,
                  int offset);
bool scan_over_time(struct scan *sc);

/* Work for the walker: unwrap command idx / parse shell string s (copied).  Beyond the
 * limits an @limit-exceeded finding, and the work is dropped. */
void scan_push_argv(struct scan *sc, size_t idx, int depth);
void scan_push_text(struct scan *sc, const char *s, struct srcpos pos, int depth);
/* The parser read simple command idx: hand it to sc->on_command (nothing without one). */
static inline void scan_command(struct scan *sc, size_t idx, int depth)
{
        if (sc->on_command)
                sc->on_command(sc, idx, depth);
}

/* walk.c: the one driver.  Every simple command a shell string (or an argv, added as
 * command 0) would run, with what wrappers, shells and interpreters run in turn, added to
 * sc: it parses, unwraps what the parser read, and works off what the unwrapper leaves
 * (scan_push_*), so that neither calls the other. */
void walk_script(struct scan *sc, const char *s, size_t n);
void walk_argv(struct scan *sc);

/* parse.c: parse a shell script and add every simple command it would run (and those of
 * its substitutions), each handed to scan_command as it is read. */
void parse_script(struct scan *sc, const char *s, size_t n, struct srcpos pos, int depth);
/* unwrap.c: judge an argv: what it runs through wrappers (sh -c, env, xargs ...) is added
 * as commands, and left as work (scan_push_*) to be judged in turn. */
void unwrap_argv(struct scan *sc, size_t idx, int depth);
/* Scan an interpreter one-liner (python, perl, ruby, node, php, awk) for calls that
 * delete, write, execute or reach the network; adds equivalent shell commands. */
void scan_code(struct scan *sc, const char *lang, const char *code, size_t parent, int depth);
/* Used by scan_code: add a command run by parent's code / a shell string / a finding. */
void code_child(struct scan *sc, size_t parent, char *const *argv, size_t n, int depth);
void code_shell(struct scan *sc, size_t parent, const char *s, int depth);
void code_finding(struct scan *sc, size_t parent, const char *name, const char *detail);
/* Scan SQL text for DROP/TRUNCATE/unfiltered DELETE; adds @sql-* findings. */
void scan_sql(struct scan *sc, const char *sql, size_t parent);

/* What a command substitution's output is when it can be told: a fresh temporary name
 * (mktemp), names beneath a directory (ls, find, git ls-files: "DIR/STAR" for all of them,
 * "DIR/" UNK for some); NULL otherwise.  n0: its first command. */
char *subst_value(struct scan *sc, size_t n0);
/* The names a listing feeds command idx's stdin ("DIR/STAR", "DIR/" UNK), or NULL. */
char *stdin_listing(struct scan *sc, size_t idx);
/* printf FORMAT ARGS... rendered (argv starts at the format), or NULL when unknown. */
char *printf_text(char *const *argv, size_t argc);
/* p (absolute) with . and .. resolved lexically; malloc'd. */
char *lexical_path(const char *p);

/* ---- shared by unwrap.c, feeds.c, listing.c and tools.c ---- */

typedef void handler_fn(struct scan *sc, size_t idx, int depth);
/* A child command of command idx (the same text, pipeline position and stdin): its index,
 * or (size_t)-1 when the command limit was reached. */
size_t uw_child(struct scan *sc, size_t idx, char *const *words, size_t n);
/* ... and judged (unwrapped) in turn. */
void uw_run(struct scan *sc, size_t idx, char *const *words, size_t n, int depth);
/* A shell string command idx runs: parsed (in a shell of its own). */
void uw_text(struct scan *sc, size_t idx, const char *s, int depth);
void uw_finding(struct scan *sc, size_t idx, const char *name, const char *detail);
/* Code that cannot be known: @download-exec when it came from a download, else
 * @unknown-command. */
void uw_unknown(struct scan *sc, size_t idx, const char *what);
/* A string of nothing but unknown text. */
bool uw_all_unk(const char *s);
bool uw_in(const char *s, const char *const *list);
char *uw_replace(const char *a, const char *pat, const char *with);
/* Absolute path of arg as command idx sees it (its cwd), or NULL when unknown. */
char *uw_path(struct scan *sc, size_t idx, const char *arg);

struct opts {
        const char *with_arg;             /* short options that take an argument */
        const char *const *long_with_arg; /* long options (no dashes) that take one */
};
/* Index of the first operand after options, never past argc. */
size_t uw_skip_opts(char **argv, size_t argc, size_t k, const struct opts *o);
bool uw_has_short(char **argv, size_t from, size_t to, char f);
/* --help or --version among the options before index to (an option region): the program
 * prints and exits. */
bool uw_help(char **argv, size_t from, size_t to);

/* listing.c */
void h_find(struct scan *sc, size_t idx, int depth);
void h_xargs(struct scan *sc, size_t idx, int depth);
void h_parallel(struct scan *sc, size_t idx, int depth);

/* tools.c: handlers of programs with their own ways to run commands or write files */
handler_fn *tool_handler(const char *prog);
/* An unknown program that takes a command anyway (a wrapper not modelled). */
void tool_generic(struct scan *sc, size_t idx, int depth);
/* A library loaded into a program: refused unless from the workspace or the system's
 * library directories. */
void tool_lib_load(struct scan *sc, size_t idx, const char *lib);
/* Files a command writes by its own options (sort -o, find -fprint ...): judged as tee. */
void tool_outputs(struct scan *sc, size_t idx, int depth);
/* toolleak.c: the environment's variables printed into a program that sends them over
 * the network (env | curl -d @- URL, curl -d "$(env)" URL): @env-leak. */
void tool_env_leak(struct scan *sc, size_t idx);
/* toolfill.c: a write with no end, or over 1 GiB, into a file (yes > f, dd bs=1G
 * count=500, fallocate -l 500G): @disk-fill. */
void tool_fill(struct scan *sc, size_t idx);
/* toolhunt.c: a search of / or the home directory for credentials (find ~ -name 'id_*',
 * grep -r 'PRIVATE KEY' /, locate '*.pem'): @key-hunt. */
void tool_hunt(struct scan *sc, size_t idx);
/* toolrepl.c: a shell reading the terminal (sh </dev/tty), a language's prompt started
 * with nothing to run (tclsh, pwsh, jshell): @interactive-shell. */
void tool_repl(struct scan *sc, size_t idx);

/* feeds.c: files written earlier in the input and run later */
void uw_script_file(struct scan *sc, size_t idx, const char *path, const char *lang, int depth);

/* Strings. */
static inline const char *base_name(const char *p)
{
        const char *s = strrchr(p, '/');
        return s && s[1] ? s + 1 : p;
}
static inline bool has_unk(const char *s) { return strchr(s, UNK) != NULL; }
char *render_argv(char *const *argv, size_t max);

/* ---- rules ---- */

enum path_class {
        PC_ROOT = 1 << 0,      /* / itself, or everything in it */
        PC_SYSTEM = 1 << 1,    /* /etc, /usr, /var, other users' homes ... */
        PC_HOME = 1 << 2,      /* the home directory itself (or everything in it) */
        PC_WORKSPACE = 1 << 3, /* the workspace root itself, an ancestor, or all of it */
        PC_SECRET = 1 << 4,    /* keys, credentials, .env files */
        PC_PERSIST = 1 << 5,   /* shell rc files, authorized_keys, cron, systemd units */
        PC_DEVICE = 1 << 6,    /* block devices, /dev/mem */
        PC_GITDIR = 1 << 7,    /* a .git directory or its internals */
        PC_TMP = 1 << 8,       /* /tmp, /var/tmp, /dev/shm */
        PC_UNKNOWN = 1 << 9,   /* cannot be known before it runs */
        PC_INSIDE = 1 << 10,   /* strictly inside the workspace */
        PC_ALL = 1 << 11,      /* every entry of /, home or the workspace (a glob of all: *, ./STAR) */
};

enum rule_target { TGT_ANY = 0, TGT_LAST, TGT_FIRST };

struct rule {
        const char *id;
        enum policy_decision decision;
        const char *reason;
        const char *const *programs;  /* basenames or globs; "@x" for findings */
        const char *const *not_programs;
        const char *const *sub;       /* leading positional words, in order */
        const char *const *flags;     /* all of these normalised flags */
        const char *const *any_flags; /* at least one of these */
        const char *const *not_flags; /* none of these */
        const char *const *args;      /* some argument (after the program) matches a glob */
        const char *const *last;      /* the last argument matches a glob */
        unsigned paths;               /* some path argument is in one of these classes */
        const char *const *path_globs; /* ... or matches one of these absolute globs */
        unsigned writes;              /* some redirection target is in these classes */
        const char *const *write_globs;
        unsigned reads;               /* some redirection source (< file) is in these classes */
        const char *const *read_globs;
        unsigned clobbers;            /* some redirection it truncates (>, not >>) is in these classes */
        const char *const *clobber_globs;
        enum rule_target target;      /* which path arguments count */
        /* Guards only the workspace and its repository, whose changes the effect rules and
         * undo judge: not applied to a well-known tool's own internal execs
         * (policy_ctx.tool_internal).  A policy file's "scope: workspace". */
        bool workspace_scope;
        bool builtin;                 /* one of the built-in rules (default.yml) */
        /* For people and tests, never for matching: what it catches, commands it must
         * decide and commands it must not (policy_test_examples), its line in its file. */
        const char *description;
        const char *const *match;
        const char *const *not_match;
        int line;
};

struct effects_cfg {
        long mass_delete_count;   /* deletions that always count as mass deletion */
        long mass_delete_min;     /* fewer deletions never do */
        double mass_delete_share; /* share of the workspace's files */
        int64_t max_file_size;
        long lost_work_min;       /* files git cannot give back, deleted or emptied at once */
        const char *const *protect; /* workspace-relative globs */
};

/* The sandbox: paths hidden besides the built-in ones and the writable caches (sandbox:). */
#define POL_MAX_SANDBOX_PATHS 256 /* entries of hide or caches */

struct policy {
        struct rule *rules; /* user rules first, then the built-in ones when included */
        size_t nrules;
        struct effects_cfg eff;
        struct policy_sandbox sandbox;
        char *file;         /* the policy file, or NULL for the built-in default */
        /* An untrusted workspace policy: its own rules, judged beside these ones; the
         * stricter decision wins (match.c).  Owned. */
        struct policy *tighten;
        char *note;         /* policy_note */
        uint64_t (*first)[4]; /* per rule: first bytes its programs can start with (all: no programs) */
        struct strvec owned; /* strings the loaded rules point at */
        void **owned_arrays;
        size_t nowned_arrays;
};

/* The built-in policy: src/lib/policy/default.yml, in the format users write, read by the
 * loader users' files go through (policy_parse_builtin) when txbox is built, by
 * scripts/policygen.c, which writes what it read as C initialisers ($(BUILD)/gen/
 * builtin_policy.c): a start-up then parses no YAML (which cost 3-4 ms), and
 * tests/unit/test_policy_rules.c checks the compiled form against the YAML.  Constant, for
 * the process's life: every policy's copies of its rules point into it. */
const struct policy *policy_builtin(void);
/* The built-in rule with this id (the first), or NULL. */
const struct rule *policy_builtin_rule(const char *id);
/* A policy file's text read as the built-in policy: no defaults after its rules (it is
 * them), its effect limits all given, rules parse-error and limit-exceeded that deny. */
int policy_parse_builtin(const char *name, const char *text, size_t len, struct policy **out,
                         struct txbox_error *err);

/* A path class by name (root, system, home ...), or 0. */
unsigned path_class_parse(const char *name);

/* Classify one path argument (UNK allowed) against ctx. */
unsigned classify_path(const char *arg, const struct policy_ctx *ctx);
/* Lexically absolute and normalised path of arg (NULL when unknown); caller frees. */
char *resolve_path(const char *arg, const struct policy_ctx *ctx);

/* Build p->first (after p->rules is complete; load.c). */
void policy_index(struct policy *p);
/* A byte that makes a rule's program name a glob. */
static inline bool glob_special(char c) { return c == '*' || c == '?' || c == '['; }

/* First rule matching c, or NULL. */
const struct rule *match_cmd(const struct policy *p, const struct scmd *c,
                             const struct policy_ctx *ctx);

/* policy_check_shell, also saying which rule decided (*by): the refusing rule, or for an
 * allow the first allow rule that matched a command (NULL: no rule matched). */
int policy_check_shell_by(const struct policy *p, const char *script, const struct policy_ctx *ctx,
                          struct policy_result *res, const struct rule **by);

#endif

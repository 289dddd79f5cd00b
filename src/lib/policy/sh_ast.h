/* The shell's syntax tree: what sh_parse.c reads a shell string into, before anything is
 * expanded or judged.  Private to the policy engine: the walker (walk.c) is to expand and
 * judge it (today it still drives parse.c, which judges while it reads; walk.c says what is
 * left), sh_print.c prints it in bash's normal form (the form `declare -f` prints) so that
 * tests can hold the parser against bash itself.
 *
 * The tree is one array of nodes (an arena): each node names its first child and its next
 * sibling by index, 0 being none.  Words keep their parts (literal text, quotes,
 * expansions, substitutions with their own lists inside); nothing is expanded here.  Every
 * limit (nodes, nesting, here-documents) fails closed: the tree then holds the commands
 * read before the failure, and err says what went wrong and where, as a syntax error
 * does (bash runs the complete commands before a syntax error too). */
#ifndef TXBOX_POLICY_SH_AST_H
#define TXBOX_POLICY_SH_AST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SH_MAX_NODES (1u << 18) /* nodes in one tree */
#define SH_MAX_NEST 96          /* compound commands and substitutions inside each other */
#define SH_MAX_HEREDOCS 64      /* here-documents waiting for their body on one line */

enum sh_kind {
        SH_NONE = 0,
        /* ---- commands ---- */
        SH_LIST,      /* kids: SH_ANDOR; each one's op: ';', '&' or '\n' (how it ended) */
        SH_ANDOR,     /* kids: SH_PIPE; each one's op: 0 (first), SH_AND or SH_OR */
        SH_PIPE,      /* kids: commands, SH_F_PIPE_ERR on one after |&; flags SH_F_BANG,
                       * SH_F_TIME */
        SH_SIMPLE,    /* kids: SH_ASSIGN, SH_WORD and SH_REDIR in the order written */
        SH_SUBSHELL,  /* kids: SH_LIST, then its SH_REDIRs */
        SH_GROUP,     /* { list }: SH_LIST, SH_REDIR... */
        SH_IF,        /* kids: cond, then, [cond, then]... (elif), [else]: SH_LISTs; SH_F_ELSE */
        SH_LOOP,      /* while/until: kids: cond, body; op 'w' or 'u' */
        SH_FOR,       /* for/select NAME [in WORDS]: text NAME; kids: SH_WORD... (SH_F_IN),
                       * then the body SH_LIST; op 'f' or 's' */
        SH_ARITH_FOR, /* for ((init; cond; step)): kids: SH_ARITH, body SH_LIST */
        SH_CASE,      /* kids: the subject SH_WORD, SH_CASE_ITEM... */
        SH_CASE_ITEM, /* kids: pattern SH_WORDs, then the body SH_LIST; op: SH_CASE_BREAK
                       * (;;), SH_CASE_FALL (;&), SH_CASE_NEXT (;;&) or 0 (before esac) */
        SH_FUNC,      /* text: the name; kid: the body (a compound command); SH_F_KEYWORD */
        SH_ARITH_CMD, /* (( expr )): kid: SH_ARITH; then SH_REDIRs */
        SH_COND,      /* [[ ... ]]: kids: SH_WORDs (operators too, as literal words) */
        SH_COPROC,    /* coproc [NAME] command: text NAME or none; kid: the command */
        /* ---- words ---- */
        SH_WORD,      /* kids: the parts below */
        SH_LIT,       /* text: unquoted characters, as written */
        SH_SQ,        /* text: the inside of '...' */
        SH_DQ,        /* kids: the parts inside "..." (SH_F_LOCALE for $"...") */
        SH_ESC,       /* text: the one character a backslash quotes */
        SH_ANSI,      /* text: $'...' with its escapes decoded */
        SH_PARAM,     /* $NAME, $1, $@, ${...}: text NAME (a subscript too, NAME[...]);
                       * op: SH_P_*; kid: the operand word, if any; SH_F_BRACED,
                       * SH_F_INDIRECT (${!x}), SH_F_LENGTH (${#x}) */
        SH_CMDSUB,    /* $( list ): kid SH_LIST */
        SH_BACKTICK,  /* `...`: sub, its own tree (the body read again, as the shell does) */
        SH_ARITH,     /* $(( )), (( )), $[ ], an arithmetic for's header: kids: parts */
        SH_PROCSUB,   /* <( list ) or >( list ): op '<' or '>'; kid SH_LIST */
        SH_TILDE,     /* ~ or ~USER at the start of a word (or after = and : in a value):
                       * text USER ("" for the home directory, "+", "-") */
        SH_ARRAY,     /* (...) of NAME=(...): kids: SH_WORDs */
        SH_ASSIGN,    /* NAME=VALUE: text NAME (with a [subscript], as written); op '='
                       * or '+' (+=); kids: the subscript's SH_WORD (op '[') when there
                       * is one, then the value SH_WORD or SH_ARRAY (none for NAME=) */
        SH_REDIR,     /* fd (-1: the default one); op: SH_R_*; text: the {NAME} of {NAME}>
                       * or none; kid: the target SH_WORD or the SH_HEREDOC */
        SH_HEREDOC,   /* text: the body as the command reads it when quoted (tabs stripped
                       * for <<-); kids: its parts when the delimiter was unquoted (then
                       * $ and ` expand in it); SH_F_QUOTED */
};

/* flags */
#define SH_F_BANG 0x1      /* SH_PIPE: ! pipeline */
#define SH_F_TIME 0x2      /* SH_PIPE: time pipeline */
#define SH_F_ELSE 0x4      /* SH_IF: has an else */
#define SH_F_IN 0x8        /* SH_FOR: has an `in` list (else it loops over "$@") */
#define SH_F_KEYWORD 0x10  /* SH_FUNC: written `function NAME` */
#define SH_F_LOCALE 0x20   /* SH_DQ: $"..." */
#define SH_F_BRACED 0x40   /* SH_PARAM: ${...} */
#define SH_F_INDIRECT 0x80 /* SH_PARAM: ${!NAME...} */
#define SH_F_LENGTH 0x100  /* SH_PARAM: ${#NAME} */
#define SH_F_QUOTED 0x200  /* SH_HEREDOC: the delimiter was quoted */
#define SH_F_OLD 0x400     /* SH_ARITH: $[ ... ] */
#define SH_F_TIMEP 0x800   /* SH_PIPE: time -p */
#define SH_F_PIPE_ERR 0x1000 /* a command of a SH_PIPE after |& (2>&1 |) */

/* ops */
enum { SH_AND = 1, SH_OR };
enum { SH_CASE_BREAK = 1, SH_CASE_FALL, SH_CASE_NEXT };
enum sh_redir_op {
        SH_R_IN = 1,     /* <   */
        SH_R_OUT,        /* >   */
        SH_R_APPEND,     /* >>  */
        SH_R_CLOBBER,    /* >|  */
        SH_R_RW,         /* <>  */
        SH_R_DUPIN,      /* <&  */
        SH_R_DUPOUT,     /* >&  */
        SH_R_ALL,        /* &>  */
        SH_R_ALL_APPEND, /* &>> */
        SH_R_HEREDOC,    /* <<  */
        SH_R_HEREDOC_TAB,/* <<- */
        SH_R_HERESTR,    /* <<< */
};
enum sh_param_op {
        SH_P_PLAIN = 0, /* $x ${x} */
        SH_P_DEFAULT,   /* ${x-w} ${x:-w} (SH_P_COLON added for the : forms) */
        SH_P_ASSIGN,    /* ${x=w} ${x:=w} */
        SH_P_ERROR,     /* ${x?w} ${x:?w} */
        SH_P_ALT,       /* ${x+w} ${x:+w} */
        SH_P_TRIM,      /* ${x#w} ${x##w} ${x%w} ${x%%w} */
        SH_P_SUBST,     /* ${x/p/s} and the rest of them */
        SH_P_CASE,      /* ${x^} ${x^^} ${x,} ${x,,} */
        SH_P_SLICE,     /* ${x:off:len} */
        SH_P_TRANSFORM, /* ${x@Q} ...: the operand is the letter */
        SH_P_PREFIX,    /* ${!prefix*} ${!prefix@} */
};
#define SH_P_COLON 0x80

struct sh_ast;

struct sh_node {
        uint8_t kind;
        uint8_t op;
        uint16_t flags;
        int32_t fd;
        uint32_t kid, next, last; /* first child, next sibling, last child (while building) */
        uint32_t off, len;        /* its text in the tree's source */
        union {
                struct {
                        const char *text; /* not NUL-terminated: tlen bytes */
                        uint32_t tlen;
                };
                struct sh_ast *sub; /* SH_BACKTICK */
        };
};

enum sh_err { SH_OK = 0, SH_ERR_SYNTAX, SH_ERR_LIMIT };

struct sh_ast {
        char *src; /* a copy of the input (NUL-terminated) */
        size_t n;
        struct sh_node *nodes;
        uint32_t nn, cap;
        uint32_t root; /* SH_LIST */
        void *strs;    /* owned strings (decoded text, here-document bodies) */
        enum sh_err err;
        char errmsg[96];
        uint32_t err_off;   /* where reading failed */
        uint32_t err_cmd;   /* where the command it failed in started */
        unsigned nsub;      /* backquoted trees inside (counted against the node limit) */
};

/* Read a shell string (n bytes; NUL inside is read as a character: callers refuse it
 * before).  nest: how deep the string already sits (a backquoted body is read at its
 * container's depth).  Never NULL. */
struct sh_ast *sh_parse(const char *s, size_t n, int nest);
void sh_ast_free(struct sh_ast *a);

static inline const struct sh_node *sh_node(const struct sh_ast *a, uint32_t i)
{
        return &a->nodes[i];
}
#define SH_KIDS(a, p, k) for (uint32_t k = (a)->nodes[p].kid; k; k = (a)->nodes[k].next)

/* The header of an arithmetic for, s[0..n) between (( and )): the two semicolons that
 * split it into init, test and step (not those inside quotes or $( ), as bash splits
 * it).  False when there are not exactly two. */
bool sh_arith_for_cuts(const char *s, size_t n, size_t cut[2]);

/* The tree printed as bash prints a function's body with `declare -f`: the program
 * wrapped in "f () \n{ \n" ... "\n}" (sh_print.c; for the tests that compare against
 * bash).  malloc'd. */
char *sh_print(const struct sh_ast *a);

#endif

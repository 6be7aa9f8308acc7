/*
 * opts: the one option parser. Each command declares a table of its
 * options and one call parses argv against it:
 *
 *   const char *json = NULL; int quiet = 0;
 *   const cli_option opts[] = {
 *       { "--json", NULL, CLI_VALUE, &json, "write the results as JSON to PATH" },
 *       { "--quiet", "-q", CLI_FLAG, &quiet, "no summary" },
 *       { NULL },
 *   };
 *   const char *file = NULL;
 *   cli_spec spec = { "run", help, opts, CLI_ONE_FILE, &file };
 *   int rc = cli_parse(&spec, argc, argv);
 *   if (rc != CLI_GO) return rc;
 *
 * Arguments are read in order. "--help"/"-h" prints the command's help
 * text (as written in its file) and stops; "--options" lists the table
 * (one option a line: names, VALUE when it takes one, the help line: for
 * shell completion and docs). A value option takes "--name VALUE" or
 * "--name=VALUE" (the last given wins); a flag only "--name" or its alias;
 * a list option may repeat up to its list's max. Errors are the
 * command's usage errors (exit status 2):
 *
 *   clustertwin: --json needs a value
 *   clustertwin run: unknown option '--jsno'; did you mean '--json'?
 *   clustertwin run: one scenario file at a time ('a.xml' and 'b.xml')
 *   clustertwin plan: at most 8 --goal
 */
#ifndef CT_CLI_OPTS_H
#define CT_CLI_OPTS_H

#include <stddef.h>

typedef enum cli_opt_kind {
    CLI_FLAG,                        /* no value: *(int *)dest = 1 */
    CLI_VALUE,                       /* one value: *(const char **)dest */
    CLI_LIST,                        /* repeated: appended to *(cli_list *)dest */
} cli_opt_kind;

typedef struct cli_list {
    const char **v;                  /* the caller's room for max values */
    int n, max;
} cli_list;

typedef struct cli_option {
    const char *name;                /* "--json"; NULL ends the table */
    const char *alias;               /* "-q", or NULL */
    cli_opt_kind kind;
    void *dest;
    const char *help;                /* one line */
} cli_option;

/* What the arguments that are not options may be. */
typedef enum cli_args_kind {
    CLI_ONE_FILE,                    /* one: "one scenario file at a time ('%s' and '%s')" */
    CLI_ONE_FILE_SHORT,              /* one: "one scenario file at a time" */
    CLI_ONE_DB,                      /* one: "one database at a time ('%s' and '%s')" */
    CLI_MANY,                        /* any number, into args[] (argc entries of room) */
    CLI_NONE,                        /* none: "unexpected argument '%s'" (also for unknown options) */
} cli_args_kind;

typedef struct cli_spec {
    const char *cmd;                 /* "run", for messages */
    const char *help;                /* the --help text */
    const cli_option *opts;
    cli_args_kind args_kind;
    const char **args;               /* where the arguments go (CLI_ONE_*: one) */
    int *n_args;                     /* CLI_MANY: how many */
} cli_spec;

#define CLI_GO (-1)

/* Parse argv[1..argc) by spec. CLI_GO: parsed, go on; otherwise the
 * command's exit status: 0 (help printed) or 2 (usage error printed). */
int cli_parse(const cli_spec *spec, int argc, char **argv);

/* The candidate closest to z: a unique one that z begins, else the one at
 * the smallest edit distance (Damerau-Levenshtein, adjacent swaps count
 * one) if that is at most 2 and at most half of z's letters (leading
 * dashes not counted). NULL when none is close. */
const char *cli_closest(const char *z, const char *const *names, int n);

/* The optimal-string-alignment edit distance between a and b (insert,
 * delete, substitute, swap two adjacent: one each). */
int cli_edit_distance(const char *a, const char *b);

#endif

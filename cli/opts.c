/*
 * opts: the table-driven option parser and the closest-name answer (see
 * opts.h). Commands have at most a few dozen options, so a linear scan per
 * argument is all it needs.
 */
#include "cli/opts.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

int cli_usage_error(const char *cmd, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "clustertwin %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(see 'clustertwin %s --help')\n", cmd);
    return EXIT_BAD_INPUT;
}

int cli_edit_distance(const char *a, const char *b) {
    size_t n = strlen(a), m = strlen(b);
    if (n > 64 || m > 64) return 99;                /* names are short; a long word is not one */
    int d[65][65];
    for (size_t i = 0; i <= n; i++) d[i][0] = (int)i;
    for (size_t j = 0; j <= m; j++) d[0][j] = (int)j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            int cost = a[i - 1] != b[j - 1];
            int best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < best) best = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[n][m];
}

const char *cli_closest(const char *z, const char *const *names, int n) {
    const char *w = z;
    while (*w == '-') w++;
    size_t letters = strlen(w);
    if (letters == 0) return NULL;
    const char *prefixed = NULL;
    int n_prefixed = 0;
    for (int i = 0; i < n; i++)
        if (!strncmp(names[i], z, strlen(z))) prefixed = names[i], n_prefixed++;
    if (n_prefixed == 1) return prefixed;
    const char *best = NULL;
    int best_d = 3;
    for (int i = 0; i < n; i++) {
        int d = cli_edit_distance(z, names[i]);
        if (d < best_d) best = names[i], best_d = d;
    }
    return best && best_d <= 2 && (size_t)best_d * 2 <= letters ? best : NULL;
}

/* The closest option name or alias of the table to z, or NULL. */
static const char *closest_option(const cli_option *opts, const char *z) {
    const char *names[128];
    int n = 0;
    names[n++] = "--help";
    for (const cli_option *o = opts; o->name && n < 126; o++) {
        names[n++] = o->name;
        if (o->alias) names[n++] = o->alias;
    }
    return cli_closest(z, names, n);
}

/* "unknown option 'z'" (or "unexpected argument 'z'") with the closest
 * option when there is one. */
static int unknown(const cli_spec *spec, const char *z) {
    const char *what = spec->args_kind == CLI_NONE ? "unexpected argument" : "unknown option";
    const char *near = z[0] == '-' ? closest_option(spec->opts, z) : NULL;
    if (near) return cli_usage_error(spec->cmd, "%s '%s'; did you mean '%s'?", what, z, near);
    return cli_usage_error(spec->cmd, "%s '%s'", what, z);
}

/* The table, for shell completion and docs. */
static void list_options(const cli_spec *spec) {
    for (const cli_option *o = spec->opts; o->name; o++)
        printf("%s%s%s%s\t%s\n", o->name, o->alias ? "," : "", o->alias ? o->alias : "",
               o->kind == CLI_FLAG ? "" : " VALUE", o->help);
}

/* Whether argv[*i] is option o; a value option takes its value (advancing
 * *i). 1 matched, 0 not this option, -1 the value is missing (printed). */
static int match(const cli_option *o, int argc, char **argv, int *i, const char **value) {
    const char *a = argv[*i];
    if (o->alias && !strcmp(a, o->alias)) {
        if (o->kind == CLI_FLAG) return 1;
    } else {
        size_t n = strlen(o->name);
        if (strncmp(a, o->name, n) != 0) return 0;
        if (o->kind == CLI_FLAG) return a[n] == 0;
        if (a[n] == '=') {
            *value = a + n + 1;
            return 1;
        }
        if (a[n] != 0) return 0;
    }
    if (*i + 1 >= argc) {
        fprintf(stderr, "clustertwin: %s needs a value\n", o->name);
        return -1;
    }
    *value = argv[++*i];
    return 1;
}

/* Store what option o was given. CLI_GO or a usage error. */
static int store(const cli_spec *spec, const cli_option *o, const char *value) {
    if (o->kind == CLI_FLAG) {
        *(int *)o->dest = 1;
    } else if (o->kind == CLI_VALUE) {
        *(const char **)o->dest = value;
    } else {
        cli_list *l = o->dest;
        if (l->n == l->max) return cli_usage_error(spec->cmd, "at most %d %s", l->max, o->name);
        l->v[l->n++] = value;
    }
    return CLI_GO;
}

/* An argument that is not an option. CLI_GO or a usage error. */
static int argument(const cli_spec *spec, const char *z) {
    if (spec->args_kind == CLI_NONE) return unknown(spec, z);
    if (spec->args_kind == CLI_MANY) {
        spec->args[(*spec->n_args)++] = z;
        return CLI_GO;
    }
    if (!spec->args[0]) {
        spec->args[0] = z;
        return CLI_GO;
    }
    if (spec->args_kind == CLI_ONE_FILE_SHORT) return cli_usage_error(spec->cmd, "one scenario file at a time");
    return cli_usage_error(spec->cmd, spec->args_kind == CLI_ONE_DB ? "one database at a time ('%s' and '%s')"
                                                                     : "one scenario file at a time ('%s' and '%s')",
                           spec->args[0], z);
}

int cli_parse(const cli_spec *spec, int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(spec->help, stdout);
            return EXIT_OK;
        }
        if (!strcmp(argv[i], "--options")) {
            list_options(spec);
            return EXIT_OK;
        }
        int m = 0, rc = CLI_GO;
        for (const cli_option *o = spec->opts; o->name && m == 0; o++) {
            const char *value = NULL;
            m = match(o, argc, argv, &i, &value);
            if (m > 0) rc = store(spec, o, value);
        }
        if (m < 0) return EXIT_BAD_INPUT;
        if (m == 0) rc = argv[i][0] == '-' && argv[i][1] ? unknown(spec, argv[i]) : argument(spec, argv[i]);
        if (rc != CLI_GO) return rc;
    }
    return CLI_GO;
}

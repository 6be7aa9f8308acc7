/*
 * load: scenario_load(), the driver of the scenario reader. Three passes,
 * each stopping at the first error:
 *
 *   1. the text: not empty, not too big, no NUL byte, an ASCII-compatible
 *      encoding, no DOCTYPE (refused before libxml2 sees it: no entity of
 *      any kind is declared, expanded or fetched); then parsed (xml.c: no
 *      network, no DTD, bounded nesting) with the line of every start tag;
 *   2. the structure, against the embedded grammar (validate.c);
 *   3. the meaning, section by section (load_*.c; load.h lists them):
 *      every attribute with its unit (attr.c), ranges, references to
 *      catalog names, tp*pp*dp*cp = gpus.
 *
 * Errors read "file:line: <element attr="value">: what was expected".
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libxml/parser.h>

#include "scenarios/catalog_xml.h"
#include "scenarios/infile.h"
#include "scenarios/load.h"
#include "scenarios/validate.h"

#define MAX_FILE_BYTES INFILE_SCENARIO_MAX_BYTES  /* a scenario is hand-written: 16 MiB is plenty */
#define MAX_DEPTH 32                   /* the schema needs 4 levels */
#define MAX_ITEMS 100000               /* elements of one kind */

void *loader_push(loader *L, void **arr, int *n, size_t size, const xmlNode *e) {
    if (*n >= MAX_ITEMS) {
        xml_fail(&L->x, e, NULL, "too many <%s> elements (at most %d)", (const char *)e->name, MAX_ITEMS);
        return NULL;
    }
    void *p = scenario_push(arr, n, size);
    if (!p) xml_fail(&L->x, e, NULL, "out of memory");
    return p;
}

/* The first element nested deeper than MAX_DEPTH, or NULL. */
static const xmlNode *too_deep(const xmlNode *e, int depth) {
    if (depth > MAX_DEPTH) return e;
    for (const xmlNode *c = e->children; c; c = c->next) {
        const xmlNode *d = c->type == XML_ELEMENT_NODE ? too_deep(c, depth + 1) : NULL;
        if (d) return d;
    }
    return NULL;
}

/* Refuse a DOCTYPE before libxml2 sees it: no entity of any kind is
 * declared, expanded or fetched. Scans the prolog (comments, processing
 * instructions, blanks) up to the first element. Returns its line or 0. */
static int doctype_line(const char *z, size_t len) {
    const char *p = z, *end = z + len;
    int line = 1;
    while (p < end) {
        if (*p == '\n') line++;
        if (*p != '<') {
            p++;
            continue;
        }
        if (end - p >= 4 && !memcmp(p, "<!--", 4)) {
            for (p += 4; p < end && !(end - p >= 3 && !memcmp(p, "-->", 3)); p++) line += *p == '\n';
            p += 3;
        } else if (end - p >= 2 && p[1] == '?') {
            for (p += 2; p < end && !(end - p >= 2 && !memcmp(p, "?>", 2)); p++) line += *p == '\n';
            p += 2;
        } else if (end - p >= 9 && !memcmp(p, "<!DOCTYPE", 9)) {
            return line;
        } else {
            return 0;                        /* the root element: the prolog is over */
        }
    }
    return 0;
}

/* Only encodings whose bytes are ASCII where the markup is: the prolog
 * check (doctype_line) reads bytes, and a DOCTYPE spelled in EBCDIC or
 * UTF-7 passed it (refused later by libxml2, at "line -1"). A declaration
 * naming another encoding, or EBCDIC's signature, is refused at line 1.
 * Returns 0 or -1 with x failed. */
static int check_encoding(xml_src *x, const char *z, size_t len) {
    if (len >= 4 && !memcmp(z, "\x4c\x6f\xa7\x94", 4)) {
        xml_fail_at(x, 1, "<?xml?>: the file is EBCDIC; a scenario must be UTF-8 (or ASCII, ISO-8859-n)");
        return -1;
    }
    if (len >= 3 && !memcmp(z, "\xef\xbb\xbf", 3)) z += 3, len -= 3;      /* UTF-8 byte order mark */
    if (len < 6 || memcmp(z, "<?xml", 5) || !strchr(" \t\n\r", z[5])) return 0;
    const char *end = memchr(z, '>', len);
    if (!end) return 0;                                                /* libxml2 says what is wrong */
    size_t n = (size_t)(end - z);
    const char *p = NULL;
    for (size_t i = 5; i + 8 <= n; i++)
        if (!memcmp(z + i, "encoding", 8) && strchr(" \t\n\r", z[i - 1])) {
            p = z + i + 8;
            break;
        }
    if (!p) return 0;
    while (p < end && strchr(" \t\n\r=", *p)) p++;
    if (p >= end || (*p != '"' && *p != '\'')) return 0;
    char q = *p++, enc[64];
    size_t k = 0;
    while (p < end && *p != q && k + 1 < sizeof enc) enc[k++] = *p++;
    enc[k] = 0;
    static const char *const ok[] = { "utf-8", "utf8", "us-ascii", "ascii", "latin1", "iso-8859-" };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        size_t m = strlen(ok[i]);
        if (!strncasecmp(enc, ok[i], m) && (ok[i][m - 1] == '-' ? enc[m] != 0 : enc[m] == 0)) return 0;
    }
    for (char *c = enc; *c; c++)
        if ((unsigned char)*c < ' ' || (unsigned char)*c > '~') *c = '?';
    xml_fail_at(x, 1, "<?xml encoding=\"%s\">: a scenario must be UTF-8 (or ASCII, ISO-8859-n)", enc);
    return -1;
}

/* Pass 1a: the bytes, before libxml2 sees them. The scenario keeps them
 * as written (for the results store), x a copy with LF line endings.
 * 0, or -1 with x failed. */
static int read_text(loader *L, const char *data, size_t len) {
    scenario *s = L->s;
    xml_src *x = &L->x;
    if (len == 0) {
        xml_fail_at(x, 1, "empty file; expected a <scenario> document");
        return -1;
    }
    if (len > MAX_FILE_BYTES) {
        xml_fail_at(x, 1, "file is %zu bytes; a scenario XML file may be at most %llu bytes", len, MAX_FILE_BYTES);
        return -1;
    }
    s->xml_text = malloc(len + 1);
    if (xml_src_set_text(x, data, len) < 0 || !s->xml_text) {
        xml_fail_at(x, 1, "out of memory");
        return -1;
    }
    memcpy(s->xml_text, data, len);          /* the file's bytes, as written */
    s->xml_text[len] = 0;
    s->xml_len = len;
    const char *nul = memchr(x->text, 0, x->text_len);
    if (nul) {
        int line = 1;
        for (const char *p = x->text; p < nul; p++) line += *p == '\n';
        xml_fail_at(x, line, "binary data (a NUL byte); expected an XML text file");
        return -1;
    }
    if (check_encoding(x, x->text, x->text_len) < 0) return -1;
    int dt = doctype_line(x->text, x->text_len);
    if (dt) {
        xml_fail_at(x, dt, "<!DOCTYPE>: document type declarations and entities are not allowed in scenarios");
        return -1;
    }
    return 0;
}

/* Pass 1b: the tree, its root <scenario>, its depth bounded, its start
 * tags indexed. The document (NULL when there is none) goes to *out
 * either way; returns its root, or NULL with x failed. */
static xmlNode *parse_tree(xml_src *x, xmlDoc **out) {
    xmlDoc *doc = xml_parse(x->text, x->text_len, x->file,
                            XML_PARSE_NOCDATA | XML_PARSE_NOWARNING | XML_PARSE_BIG_LINES, NULL, NULL);
    *out = doc;
    if (!doc) {
        xml_fail_at(x, 1, "malformed XML");          /* when libxml2 said nothing */
        return NULL;
    }
    if (xml_doctype_line(doc)) {
        xml_fail_at(x, xml_doctype_line(doc),
                    "<!DOCTYPE>: document type declarations and entities are not allowed in scenarios");
        return NULL;
    }
    xmlNode *root = xmlDocGetRootElement(doc);
    if (!root || strcmp((const char *)root->name, "scenario") != 0) {
        xml_fail_at(x, root ? (int)xmlGetLineNo(root) : 1, "<%s>: expected <scenario> as the root element",
                    root ? (const char *)root->name : "");
        return NULL;
    }
    const xmlNode *deep = too_deep(root, 1);
    if (deep) {
        xml_fail(x, deep, NULL, "elements nested more than %d deep", MAX_DEPTH);
        return NULL;
    }
    if (xml_src_index(x, root) < 0) {
        xml_fail_at(x, 1, "out of memory");
        return NULL;
    }
    return x->failed ? NULL : root;
}

/* The catalog: built in, then the scenario's own <catalog> additions. */
static void load_catalog(loader *L, const xmlNode *root) {
    scenario *s = L->s;
    char cerr[1024];
    s->cat = catalog_new();
    if (!s->cat || catalog_load_builtin(s->cat, cerr, sizeof cerr) < 0) {
        xml_fail_at(&L->x, 1, "internal error: the built-in catalog does not load: %s", s->cat ? cerr : "out of memory");
        return;
    }
    for (const xmlNode *e = root->children; e; e = e->next)
        if (xml_is(e, "catalog") && catalog_load_element(s->cat, e, L->x.file, L->x.err, L->x.errlen) < 0) {
            L->x.failed = 1;
            return;
        }
}

/* <scenario name= seed= duration=>, and the defaults of <failures>. */
static void load_root(loader *L, const xmlNode *root) {
    scenario *s = L->s;
    attr_str(&L->x, root, "name", s->name, sizeof s->name, 1);
    double seed = 1;
    if (attr_unit(&L->x, root, "seed", UNIT_NUMBER, &seed, 0, 0) > 0 &&
        (seed < 0 || seed != floor(seed) || seed > 9007199254740992.0))
        xml_fail(&L->x, root, "seed", "seed must be a whole number from 0 to 2^53");
    if (!L->x.failed) s->seed = (uint64_t)seed;     /* only a checked value: -1 would be UB */
    load_snapshot_time(L, root);
    attr_unit(&L->x, root, "duration", UNIT_DURATION, &s->duration_s, 0, 1);
    if (!L->x.failed && s->duration_s > 1000.0 * 365 * 86400)
        xml_fail(&L->x, root, "duration", "duration must be at most 1000 years");

    /* Defaults of <failures> attributes (see sc_failures_cfg). */
    s->failure_cfg.watchdog_s = 600;           /* PyTorch NCCL watchdog default: 10 min */
    s->failure_cfg.crash_detect_s = 30;        /* process exit seen by the launcher, ~seconds */
    s->failure_cfg.restart_s = 300;            /* reschedule + container and process start */
    s->failure_cfg.health_at_start = 1;
    s->failure_cfg.lemon_window_s = 30 * 86400.0;
}

/* Pass 3: the sections in dependency order, the cluster before what runs on it. */
static void load_sections(loader *L, const xmlNode *root) {
    static const struct { const char *name; void (*fn)(loader *, const xmlNode *); } order[] = {
        { "cluster", load_cluster }, { "scheduler", load_scheduler }, { "failures", load_failures },
        { "workload", load_workload }, { "microbenchmarks", load_microbenchmarks }, { "cost", load_cost },
    };
    for (size_t i = 0; i < sizeof order / sizeof order[0] && !L->x.failed; i++)
        for (const xmlNode *e = root->children; e && !L->x.failed; e = e->next)
            if (xml_is(e, order[i].name)) order[i].fn(L, e);
    if (!L->x.failed && xml_count_children(root, "cluster") == 0 &&
        (xml_count_children(root, "workload") || xml_count_children(root, "microbenchmarks")))
        xml_fail(&L->x, root, NULL, "a scenario with a workload or microbenchmarks needs a <cluster>");
}

static int load(loader *L, const char *data, size_t len) {
    xmlDoc *doc = NULL;
    if (read_text(L, data, len) < 0) return -1;
    xml_src_begin(&L->x);                  /* libxml2's messages are ours until the end */
    xmlNode *root = parse_tree(&L->x, &doc);
    if (root) validate_scenario(&L->x, doc);
    if (root && !L->x.failed) load_catalog(L, root);
    if (root && !L->x.failed) load_root(L, root);
    if (root && !L->x.failed) load_sections(L, root);
    xml_src_end(&L->x);
    xmlFreeDoc(doc);
    return L->x.failed ? -1 : 0;
}

/* Everything the loader holds besides the scenario. */
static void loader_free(loader *L) {
    xml_src_free(&L->x);
    free(L->type_gpus);
    name_set *sets[] = { &L->queue_names, &L->storage_names, &L->training_names, &L->jobs_names,
                         &L->inference_names, &L->node_types, &L->served };
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) nameset_free(sets[i]);
}

int scenario_load_memory(const char *data, size_t len, const char *name, scenario **out,
                         char *err, size_t errlen) {
    *out = NULL;
    scenario *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "%s:1: out of memory", name);
        return -1;
    }
    snprintf(s->file, sizeof s->file, "%s", name);
    loader L = { .x = { .file = name, .err = err, .errlen = errlen }, .s = s };
    int rc = load(&L, data, len);
    loader_free(&L);
    if (rc < 0) {
        for (char *p = err; errlen && *p; p++)      /* one line, whoever wrote it */
            if ((unsigned char)*p < ' ') *p = ' ';
        scenario_free(s);
        return -1;
    }
    *out = s;
    return 0;
}

int scenario_load(const char *path, scenario **out, char *err, size_t errlen) {
    *out = NULL;
    char *buf;
    size_t n;
    if (infile_load(path, MAX_FILE_BYTES, "a scenario XML file", &buf, &n, err, errlen) < 0) return -1;
    int rc = scenario_load_memory(buf, n, path, out, err, errlen);
    free(buf);
    return rc;
}

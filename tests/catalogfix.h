/*
 * catalogfix: the built-in catalog as a cmocka group fixture, for the model
 * tests. catalog_setup() loads it into `cat` (a failure is printed and
 * fails the group); catalog_teardown() frees it. Include after <cmocka.h>.
 */
#ifndef CT_TEST_CATALOGFIX_H
#define CT_TEST_CATALOGFIX_H

#include <stdio.h>

#include "models/catalog.h"
#include "scenarios/catalog_xml.h"

static catalog *cat;

static inline int catalog_setup(void **state) {
    (void)state;
    char err[512] = "";
    cat = catalog_new();
    if (!cat || catalog_load_builtin(cat, err, sizeof err) < 0) {
        fprintf(stderr, "catalog_load_builtin: %s\n", cat ? err : "out of memory");
        return -1;
    }
    return 0;
}

static inline int catalog_teardown(void **state) {
    (void)state;
    catalog_free(cat);
    cat = NULL;
    return 0;
}

#endif

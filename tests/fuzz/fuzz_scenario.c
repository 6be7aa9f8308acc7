/*
 * fuzz_scenario: libFuzzer harness for the scenario loader
 * (scenario_load_memory: libxml2 parse, structure check, RELAX NG
 * validation, meaning, catalog overrides).
 *
 * Property: any input either loads (and frees cleanly) or fails with one
 * line "fuzz.xml:LINE: ..." (LINE >= 0); never a crash, a leak, undefined
 * behaviour or a hang (libFuzzer's -timeout). Seeds: tests/fuzz/scenario/.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenarios/scenario.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    scenario *s = NULL;
    char err[2048];
    err[0] = 0;
    if (scenario_load_memory((const char *)data, size, "fuzz.xml", &s, err, sizeof err) == 0) {
        if (!s) fuzz_fail("loaded without a scenario");
        scenario_free(s);
        return 0;
    }
    if (s) fuzz_fail("failed but left a scenario");
    fuzz_check_error(err, "fuzz.xml:");
    return 0;
}

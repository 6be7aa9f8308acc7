/*
 * fuzz_units: libFuzzer harness for the unit parser and formatter
 * (base/units.h).
 *
 * The first byte picks the kind, the rest is the text. Properties: a parse
 * succeeds only with a finite value, non-negative for every kind but
 * UNIT_NUMBER, and leaves the output untouched on failure with a one-line
 * reason; units_format of any double (the parsed one and the raw input
 * bytes read as a double) always ends NUL-terminated within its buffer.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/units.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || size > 4096) return 0;
    unit_kind kind = (unit_kind)(data[0] % 6);
    char text[4097];
    memcpy(text, data + 1, size - 1);
    text[size - 1] = 0;
    double v = -12345.0;
    char err[128];
    memset(err, 'x', sizeof err);
    int rc = units_parse(text, kind, &v, err, sizeof err);
    if (rc == 0) {
        if (!isfinite(v)) fuzz_fail("parsed a non-finite value");
        if (kind != UNIT_NUMBER && v < 0) fuzz_fail("parsed a negative value");
    } else {
        if (rc != -1) fuzz_fail("status is neither 0 nor -1");
        if (v != -12345.0) fuzz_fail("output changed on failure");
        if (!memchr(err, 0, sizeof err)) fuzz_fail("reason not terminated");
        if (strchr(err, '\n')) fuzz_fail("reason is more than one line");
    }
    char buf[32];
    for (size_t len = 1; len <= sizeof buf; len += 7) {
        memset(buf, 'x', sizeof buf);
        units_format(v, kind, buf, len);
        if (!memchr(buf, 0, len)) fuzz_fail("format overran or did not terminate");
    }
    if (size >= 9) {
        double raw;
        memcpy(&raw, data + 1, sizeof raw);
        units_format(raw, kind, buf, sizeof buf);
        if (!memchr(buf, 0, sizeof buf)) fuzz_fail("format of a raw double did not terminate");
    }
    return 0;
}

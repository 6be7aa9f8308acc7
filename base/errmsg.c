#include "base/errmsg.h"

#include <stdarg.h>
#include <stdio.h>

void errmsg_set(char *err, size_t errlen, const char *fmt, ...) {
    if (!err || !errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

int errmsg_at(char *err, size_t errlen, const char *path, long line, const char *fmt, ...) {
    if (!err || !errlen) return -1;
    int o = snprintf(err, errlen, "%s:%ld: ", path, line);
    if (o >= 0 && (size_t)o < errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + o, errlen - (size_t)o, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/*
 * errmsg: format a message into a caller's error buffer, the one way the
 * report writers and the results store fill their `char *err, size_t
 * errlen` arguments.
 */
#ifndef CT_ERRMSG_H
#define CT_ERRMSG_H

#include <stddef.h>

/* printf into err (errlen bytes, always terminated); NULL or 0 is a no-op. */
void errmsg_set(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* "PATH:LINE: " and then the formatted message into err: how the input
 * readers (the trace readers) say where a file went wrong. Returns -1. */
int errmsg_at(char *err, size_t errlen, const char *path, long line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#endif

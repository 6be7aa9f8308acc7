/*
 * infile: open and read input files (see infile.h).
 */
#include "scenarios/infile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int failed(infile_err *e, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int failed(infile_err *e, int line, const char *fmt, ...) {
    e->line = line;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->why, sizeof e->why, fmt, ap);
    va_end(ap);
    return -1;
}

static const char *kind_of(mode_t m) {
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISSOCK(m)) return "a socket";
    return "not a file";
}

/* Open, check and make blocking. Returns the descriptor with *size set, or
 * -1 with e filled (nothing left open). */
static int open_checked(const char *path, unsigned long long max_bytes, const char *what, unsigned long long *size,
                        infile_err *e) {
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return failed(e, 0, "cannot open: %s", strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int k = errno;
        close(fd);
        return failed(e, 0, "cannot open: %s", strerror(k));
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return failed(e, 0, "is a directory; expected %s", what);
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return failed(e, 0, "not a regular file (%s); expected %s", kind_of(st.st_mode), what);
    }
    if ((unsigned long long)st.st_size > max_bytes) {
        close(fd);
        return failed(e, 1, "file is %llu bytes; %s may be at most %llu bytes", (unsigned long long)st.st_size, what,
                      max_bytes);
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
        int k = errno;
        close(fd);
        return failed(e, 0, "cannot open: %s", strerror(k));
    }
    *size = (unsigned long long)st.st_size;
    return fd;
}

int infile_read(const char *path, unsigned long long max_bytes, const char *what, char **data, size_t *len,
                infile_err *e) {
    *data = NULL;
    *len = 0;
    unsigned long long size;
    int fd = open_checked(path, max_bytes, what, &size, e);
    if (fd < 0) return -1;
    /* One byte more than fstat said: a file that grew since is refused,
     * not truncated. */
    size_t cap = (size_t)size + 1, n = 0;
    char *buf = malloc(cap + 1);
    if (!buf) {
        close(fd);
        return failed(e, 0, "out of memory (reading %llu bytes)", size);
    }
    while (n < cap) {
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            int k = errno;
            free(buf);
            close(fd);
            return failed(e, 0, "read error: %s", strerror(k));
        }
        if (got == 0) break;
        n += (size_t)got;
    }
    close(fd);
    if (n == cap) {
        free(buf);
        return failed(e, 1, "file changed while being read");
    }
    buf[n] = 0;
    *data = buf;
    *len = n;
    return 0;
}

void infile_say(const infile_err *e, const char *path, char *err, size_t errlen) {
    snprintf(err, errlen, "%s:%d: %s", path, e->line, e->why);
}

int infile_load(const char *path, unsigned long long max_bytes, const char *what, char **data, size_t *len,
                char *err, size_t errlen) {
    infile_err e;
    if (infile_read(path, max_bytes, what, data, len, &e) == 0) return 0;
    infile_say(&e, path, err, errlen);
    return -1;
}

FILE *infile_open(const char *path, unsigned long long max_bytes, const char *what, infile_err *e) {
    unsigned long long size;
    int fd = open_checked(path, max_bytes, what, &size, e);
    if (fd < 0) return NULL;
    FILE *f = fdopen(fd, "r");
    if (!f) {
        int k = errno;
        close(fd);
        failed(e, 0, "cannot open: %s", strerror(k));
    }
    return f;
}

int infile_utf8_len(const unsigned char *p, size_t n) {
    if (n == 0) return 0;
    unsigned c = p[0];
    if (c < 0x80) return 1;
    size_t k;
    unsigned lo = 0x80, hi = 0xbf;                /* the range of the second byte */
    if (c >= 0xc2 && c <= 0xdf) k = 1;
    else if (c >= 0xe0 && c <= 0xef) {
        k = 2;
        if (c == 0xe0) lo = 0xa0;                 /* overlong */
        if (c == 0xed) hi = 0x9f;                 /* surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        k = 3;
        if (c == 0xf0) lo = 0x90;                 /* overlong */
        if (c == 0xf4) hi = 0x8f;                 /* past U+10FFFF */
    } else {
        return 0;                                 /* a continuation byte, C0/C1, past F4 */
    }
    if (n <= k || p[1] < lo || p[1] > hi) return 0;
    for (size_t j = 2; j <= k; j++)
        if ((p[j] & 0xc0) != 0x80) return 0;
    return (int)k + 1;
}

size_t infile_utf8_valid(const char *z, size_t n) {
    const unsigned char *p = (const unsigned char *)z;
    size_t i = 0;
    for (int k; i < n && (k = infile_utf8_len(p + i, n - i)) > 0;) i += (size_t)k;
    return i;
}

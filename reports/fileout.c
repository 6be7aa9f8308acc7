/*
 * fileout: see fileout.h.
 */
#include "reports/fileout.h"

#include "scenarios/infile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_LINKS 40

int fileout_resolve(const char *path, char *target, size_t len, int *exists, unsigned *mode) {
    char cur[FILEOUT_PATH_MAX], link[FILEOUT_PATH_MAX];
    *exists = 0;
    *mode = 0;
    if (snprintf(cur, sizeof cur, "%s", path) >= (int)sizeof cur) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (int hops = 0;; hops++) {
        struct stat sb;
        if (lstat(cur, &sb) != 0) {
            if (errno != ENOENT) return -1;
            break;                                     /* a new file (or a dangling link's target) */
        }
        if (!S_ISLNK(sb.st_mode)) {
            *exists = 1;
            *mode = (unsigned)sb.st_mode;
            break;
        }
        if (hops >= MAX_LINKS) {
            errno = ELOOP;
            return -1;
        }
        ssize_t n = readlink(cur, link, sizeof link - 1);
        if (n < 0) return -1;
        if ((size_t)n >= sizeof link - 1) {
            errno = ENAMETOOLONG;
            return -1;
        }
        link[n] = 0;
        /* A kernel "magic" link (/proc/self/fd/N, where /dev/stdout and
         * /dev/fd/N lead) names "pipe:[N]" or "socket:[N]", not a path:
         * what it names does not exist, yet the kernel follows the link
         * itself. Then the link is where to write. (A dangling link
         * proper fails both.) */
        struct stat tb;
        if (stat(cur, &tb) == 0 && !S_ISDIR(tb.st_mode)) {
            char next[FILEOUT_PATH_MAX * 2];
            if (link[0] == '/') snprintf(next, sizeof next, "%s", link);
            else {
                const char *slash = strrchr(cur, '/');
                snprintf(next, sizeof next, "%.*s%s", slash ? (int)(slash - cur) + 1 : 0, cur, link);
            }
            struct stat nb;
            if (lstat(next, &nb) != 0) {
                *exists = 1;
                *mode = (unsigned)tb.st_mode;
                break;
            }
        }
        if (link[0] == '/') {
            memcpy(cur, link, (size_t)n + 1);
        } else {                                       /* relative to the link's directory */
            char *slash = strrchr(cur, '/');
            size_t keep = slash ? (size_t)(slash - cur) + 1 : 0;
            if (keep + (size_t)n + 1 > sizeof cur) {
                errno = ENAMETOOLONG;
                return -1;
            }
            memmove(cur + keep, link, (size_t)n + 1);
        }
    }
    if (snprintf(target, len, "%s", cur) >= (int)len) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

static void set_err(char *err, size_t errlen, const char *path, const char *what, int e) {
    if (err && errlen) snprintf(err, errlen, "%s: %s%s%s", path, what, e ? ": " : "", e ? strerror(e) : "");
}

/* A temporary file beside target, created exclusively with perm (the umask
 * applies, as for any new file). fd or -1 with errno. */
static int make_tmp(const char *target, char *tmp, size_t len, unsigned perm) {
    static unsigned serial;
    for (int tries = 0; tries < 100; tries++) {
        if (snprintf(tmp, len, "%s.tmp.%ld.%u", target, (long)getpid(), serial++) >= (int)len) {
            errno = ENAMETOOLONG;
            return -1;
        }
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, (mode_t)perm);
        if (fd >= 0 || errno != EEXIST) return fd;
    }
    errno = EEXIST;
    return -1;
}

int fileout_open(fileout *o, const char *path, int flags, unsigned perm, char *err, size_t errlen) {
    memset(o, 0, sizeof *o);
    snprintf(o->path, sizeof o->path, "%s", path ? path : "");
    if (!path || !*path) {
        set_err(err, errlen, "output", "empty path", 0);
        errno = ENOENT;
        return 2;
    }
    if ((flags & FILEOUT_STDOUT) && !strcmp(path, "-")) {
        o->how = FILEOUT_TO_STDOUT;
        o->f = stdout;
        return 0;
    }
    /* /dev/stdout, /dev/fd/1, /proc/self/fd/1 (and 2): the stream itself,
     * whatever it is (a pipe, a terminal, a file opened for appending). */
    if (!strncmp(path, "/dev/", 5) || !strncmp(path, "/proc/", 6)) {
        struct stat want, fd_sb;
        for (int fd = 1; fd <= 2 && stat(path, &want) == 0; fd++)
            if (fstat(fd, &fd_sb) == 0 && fd_sb.st_dev == want.st_dev && fd_sb.st_ino == want.st_ino &&
                fd_sb.st_rdev == want.st_rdev && (strstr(path, fd == 1 ? "stdout" : "stderr") || strstr(path, fd == 1 ? "fd/1" : "fd/2"))) {
                o->how = FILEOUT_TO_STDOUT;
                o->f = fd == 1 ? stdout : stderr;
                return 0;
            }
    }
    int exists;
    unsigned mode;
    if (fileout_resolve(path, o->target, sizeof o->target, &exists, &mode) != 0) {
        int e = errno;
        set_err(err, errlen, path, "cannot write", e);
        errno = e;
        return 1;
    }
    if (exists && S_ISDIR(mode)) {
        set_err(err, errlen, path, "is a directory (a file expected)", 0);
        errno = EISDIR;
        return 2;
    }
    if (exists && !S_ISREG(mode)) {
        if (flags & FILEOUT_REGULAR) {
            set_err(err, errlen, path, "not a regular file (a device, FIFO or socket cannot hold it)", 0);
            errno = EINVAL;
            return 2;
        }
        /* In place: no O_TRUNC, no O_CREAT; O_NONBLOCK so that a FIFO
         * without a reader fails (ENXIO) instead of waiting forever. */
        int fd = open(o->target, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0) {
            int e = errno;
            if (e == ENXIO && S_ISFIFO(mode)) set_err(err, errlen, path, "cannot write: a FIFO with no reader", 0);
            else set_err(err, errlen, path, "cannot write", e);
            errno = e;
            return 1;
        }
        int fl = fcntl(fd, F_GETFL);
        if (fl != -1) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);      /* writes then wait for the reader */
        if (!(o->f = fdopen(fd, "w"))) {
            int e = errno;
            close(fd);
            set_err(err, errlen, path, "cannot write", e);
            errno = e;
            return 1;
        }
        o->how = FILEOUT_IN_PLACE;
        return 0;
    }
    int fd = make_tmp(o->target, o->tmp, sizeof o->tmp, perm);
    if (fd < 0) {
        int e = errno;
        set_err(err, errlen, path, "cannot write", e);
        o->tmp[0] = 0;
        errno = e;
        return 1;
    }
    if (exists) fchmod(fd, (mode_t)(mode & 07777));              /* a replaced file keeps its mode */
    if (!(o->f = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        unlink(o->tmp);
        o->tmp[0] = 0;
        set_err(err, errlen, path, "cannot write", e);
        errno = e;
        return 1;
    }
    o->how = FILEOUT_REPLACE;
    return 0;
}

int fileout_close(fileout *o, char *err, size_t errlen) {
    if (!o->f) {
        set_err(err, errlen, o->path, "cannot write", EBADF);
        errno = EBADF;
        return 1;
    }
    FILE *f = o->f;
    o->f = NULL;
    errno = 0;
    int bad = ferror(f) != 0, e = bad ? (errno ? errno : EIO) : 0;
    if (!bad && fflush(f) != 0) bad = 1, e = errno;
    if (o->how == FILEOUT_TO_STDOUT) {
        if (bad) {
            set_err(err, errlen, f == stderr ? "stderr" : f == stdout ? "stdout" : o->path, "write error", e);
            errno = e;
            return 1;
        }
        return 0;
    }
    if (!bad && o->how == FILEOUT_REPLACE && fsync(fileno(f)) != 0) bad = 1, e = errno;
    if (fclose(f) != 0 && !bad) bad = 1, e = errno;
    if (!bad && o->how == FILEOUT_REPLACE && rename(o->tmp, o->target) != 0) bad = 1, e = errno;
    if (bad && o->how == FILEOUT_REPLACE) unlink(o->tmp);
    o->tmp[0] = 0;
    if (bad) {
        set_err(err, errlen, o->path, "cannot write", e ? e : EIO);
        errno = e ? e : EIO;
        return 1;
    }
    return 0;
}

void fileout_abort(fileout *o) {
    if (!o->f) return;
    if (o->how != FILEOUT_TO_STDOUT) fclose(o->f);
    if (o->how == FILEOUT_REPLACE) unlink(o->tmp);
    o->f = NULL;
    o->tmp[0] = 0;
}

int fileout_write(const char *path, int flags, unsigned perm, const char *text, size_t n, char *err,
                  size_t errlen) {
    fileout o;
    int rc = fileout_open(&o, path, flags, perm, err, errlen);
    if (rc) return rc;
    if (n && fwrite(text, 1, n, o.f) != n) {
        int e = errno;
        fileout_abort(&o);
        set_err(err, errlen, path, "cannot write", e ? e : EIO);
        errno = e ? e : EIO;
        return 1;
    }
    return fileout_close(&o, err, errlen);
}

int fileout_mkdirs(const char *dir) {
    char p[FILEOUT_PATH_MAX];
    if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *s = p + 1; *s; s++) {
        if (*s != '/') continue;
        *s = 0;
        if (mkdir(p, 0777) != 0 && errno != EEXIST) return -1;
        *s = '/';
    }
    if (mkdir(p, 0777) != 0 && errno != EEXIST) return -1;
    struct stat sb;
    if (stat(p, &sb) != 0) return -1;
    if (!S_ISDIR(sb.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

/* ---- text ------------------------------------------------------------------ */

int fileout_utf8_len(const unsigned char *p) {
    return infile_utf8_len(p, 4);                /* stops at the NUL: not a continuation byte */
}

static const char REPLACEMENT[] = "\xEF\xBF\xBD";      /* U+FFFD */

/* Copy the multi-byte sequence at *p (or U+FFFD for one bad byte) and
 * advance *p past what was consumed; the caller handles ASCII itself. */
static void put_non_ascii(FILE *f, const unsigned char **p) {
    int n = fileout_utf8_len(*p);
    if (n > 1) {
        fwrite(*p, 1, (size_t)n, f);
        *p += n - 1;
    } else {
        fputs(REPLACEMENT, f);
    }
}

void fileout_html(FILE *f, const char *z) {
    for (const unsigned char *p = (const unsigned char *)(z ? z : ""); *p; p++) {
        switch (*p) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default:
            if (*p >= 0x80) put_non_ascii(f, &p);
            else if ((*p >= 0x20 && *p != 0x7F) || *p == '\n' || *p == '\t') fputc(*p, f);
        }
    }
}

/* z is a whole decimal number ("-3", "+2.5e-3"): a spreadsheet reads it as
 * that number, never as a formula, so it keeps its sign. */
static int plain_number(const char *z) {
    const char *p = z + (*z == '-' || *z == '+');
    int digits = 0;
    while (*p >= '0' && *p <= '9') p++, digits++;
    if (*p == '.') for (p++; *p >= '0' && *p <= '9'; p++) digits++;
    if (!digits) return 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '-' || *p == '+') p++;
        if (!(*p >= '0' && *p <= '9')) return 0;
        while (*p >= '0' && *p <= '9') p++;
    }
    return *p == 0;
}

void fileout_csv(FILE *f, const char *z) {
    if (!z) z = "";
    int formula = z[0] != 0 && strchr("=+-@\t\r", z[0]) != NULL && !plain_number(z);
    int quote = strpbrk(z, ",\"\n\r") != NULL;
    if (quote) fputc('"', f);
    if (formula) fputc('\'', f);
    for (const unsigned char *p = (const unsigned char *)z; *p; p++) {
        if (*p == '"') fputs("\"\"", f);
        else if (*p >= 0x80) put_non_ascii(f, &p);
        else fputc(*p, f);
    }
    if (quote) fputc('"', f);
}

static int word_char(unsigned char c) {
    return c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

void fileout_md(FILE *f, const char *z) {
    const unsigned char *start = (const unsigned char *)(z ? z : "");
    for (const unsigned char *p = start; *p; p++) {
        switch (*p) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '\\': case '`': case '*': case '|': case '~':
            fputc('\\', f);
            fputc(*p, f);
            break;
        case '_':                                      /* inside a word it is no emphasis: end_s stays */
            if (!(p > start && word_char(p[-1]) && word_char(p[1]))) fputc('\\', f);
            fputc('_', f);
            break;
        case ']':                                      /* no link or image: ](url) [ref] ]: */
            if (p[1] == '(' || p[1] == '[' || p[1] == ':') fputc('\\', f);
            fputc(']', f);
            break;
        default:
            if (*p >= 0x80) put_non_ascii(f, &p);
            else if (*p < 0x20 || *p == 0x7F) fputc(' ', f);
            else fputc(*p, f);
        }
    }
}

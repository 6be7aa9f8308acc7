/*
 * fileout: see fileout.h.
 */
#include "reports/fileout.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int fileout_mkdirs(const char *dir) {
    char p[4096];
    snprintf(p, sizeof p, "%s", dir);
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

FILE *fileout_open(const char *path, char *tmp, size_t len) {
    snprintf(tmp, len, "%s.tmp.%ld", path, (long)getpid());
    return fopen(tmp, "w");
}

int fileout_close(FILE *f, const char *tmp, const char *path) {
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    if (!bad && rename(tmp, path) == 0) return 0;
    int e = errno ? errno : EIO;
    unlink(tmp);
    errno = e;
    return -1;
}

void fileout_html(FILE *f, const char *z) {
    for (const unsigned char *p = (const unsigned char *)z; *p; p++) {
        switch (*p) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default:
            if (*p >= 0x20 || *p == '\n' || *p == '\t') fputc(*p, f);
        }
    }
}

void fileout_csv(FILE *f, const char *z) {
    if (!strpbrk(z, ",\"\n\r")) {
        fputs(z, f);
        return;
    }
    fputc('"', f);
    for (; *z; z++) {
        if (*z == '"') fputc('"', f);
        fputc(*z, f);
    }
    fputc('"', f);
}

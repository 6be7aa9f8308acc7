/*
 * testpause: the test-only pause hook (see testpause.h).
 */
#include "cli/testpause.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* The FIFO's path, or NULL when the hook is off (unset, empty, not a FIFO). */
static const char *pause_fifo(void) {
    const char *z = getenv("CT_TEST_PAUSE_FIFO");
    struct stat sb;
    if (!z || !*z || stat(z, &sb) != 0 || !S_ISFIFO(sb.st_mode)) return NULL;
    return z;
}

/* open() that retries when a signal interrupted it without SA_RESTART.
 * Returns the descriptor or -1. */
static int open_retry(const char *path, int flags) {
    int fd;
    do fd = open(path, flags | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    return fd;
}

void testpause_point(void) {
    const char *path = pause_fifo();
    if (!path) return;
    int fd = open_retry(path, O_WRONLY);                /* until the test reads */
    if (fd < 0) return;
    ssize_t w;
    do w = write(fd, "P", 1);
    while (w < 0 && errno == EINTR);
    close(fd);
    if (w != 1) return;
    fd = open_retry(path, O_RDONLY);                    /* until the test lets go */
    if (fd < 0) return;
    char buf[64];
    ssize_t r;
    do r = read(fd, buf, sizeof buf);
    while (r > 0 || (r < 0 && errno == EINTR));
    close(fd);
}

/* The sink: counts samples and events at t > 0, pauses once at the Nth. */
typedef struct pause_state {
    long seen, at;
    int done;
} pause_state;

static pause_state state;

/* CT_TEST_PAUSE_AFTER: a whole number >= 1, else 1. */
static long pause_after(void) {
    const char *n = getenv("CT_TEST_PAUSE_AFTER");
    char *end = NULL;
    long at = n && *n ? strtol(n, &end, 10) : 1;
    return (end && *end) || at < 1 ? 1 : at;
}

static void count_and_pause(void) {
    if (state.at == 0) state.at = pause_after();
    if (state.done || ++state.seen < state.at) return;
    state.done = 1;
    testpause_point();
}

static void pause_tick(sim_time t) {
    if (t > 0) count_and_pause();
}

int testpause_active(void) { return pause_fifo() != NULL; }

void testpause_tick(void) {
    if (pause_fifo()) count_and_pause();
}

static void on_sample(void *ctx, metric_id id, sim_time t, double value) {
    (void)ctx, (void)id, (void)value;
    pause_tick(t);
}

static void on_event(void *ctx, sim_time t, const char *entity, const char *kind, const char *detail) {
    (void)ctx, (void)entity, (void)kind, (void)detail;
    pause_tick(t);
}

int testpause_subscribe(metric_bus *b) {
    if (!pause_fifo()) return 0;
    state = (pause_state){ .seen = 0, .at = pause_after(), .done = 0 };
    metric_sink s = { .on_sample = on_sample, .on_event = on_event };
    return metrics_subscribe(b, &s);
}

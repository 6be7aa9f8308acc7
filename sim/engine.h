/*
 * engine: the discrete-event kernel. It knows time, events and the queue;
 * nothing about GPUs, jobs or networks.
 *
 * Simulated time is an integer count of nanoseconds (sim_time). Events are
 * ordered by (time, insertion sequence), so two events at the same instant
 * come out in the order they were scheduled and a run is deterministic.
 *
 * Expected load: millions of schedule/pop pairs per second with 1e3..1e6
 * pending events (step events of thousands of jobs, per-iteration events of
 * serving replicas, one pending failure per component). Cancels are common
 * (a failure cancels the job's pending step), so cancel is O(1) amortised.
 */
#ifndef CT_ENGINE_H
#define CT_ENGINE_H

#include <stddef.h>
#include <stdint.h>

typedef int64_t sim_time;           /* nanoseconds since the start of the run */
typedef uint64_t event_id;          /* 0 is never a valid id */

#define SIM_NS_PER_S 1000000000LL
#define SIM_FOREVER INT64_MAX

typedef struct engine engine;

/* An event handler. `arg` is what was given to engine_schedule(); the engine
 * never owns or frees it. A handler may schedule and cancel events, including
 * events at the current time (they run after the current one) and itself. */
typedef void (*event_fn)(engine *e, void *arg);

/* New engine at time 0. Returns NULL when out of memory. */
engine *engine_new(void);
/* Frees the engine and its pending events (not their args). NULL is a no-op. */
void engine_free(engine *e);

sim_time engine_now(const engine *e);
/* The engine's clock itself: *engine_clock(e) is engine_now(e) at every
 * moment, for a caller that reads the time on every event (the world:
 * 1% of bench_sched was the call). */
const sim_time *engine_clock(const engine *e);

/* Schedule fn(arg) at absolute time t_ns (clamped to now if earlier; an
 * event after SIM_HORIZON stays pending and never runs). Returns the event's id, or 0 when out of memory (nothing scheduled). */
event_id engine_schedule(engine *e, sim_time t_ns, event_fn fn, void *arg);
/* Same, at now + delay_ns (delay clamped to >= 0, saturating at SIM_FOREVER). */
event_id engine_after(engine *e, sim_time delay_ns, event_fn fn, void *arg);

/* Room for n more pending events scheduled in time order (a trace's
 * submissions) without growing the arrays one doubling at a time (each a
 * copy). No effect on the order or the results. 0, or -1 when out of
 * memory (nothing changed). */
int engine_reserve(engine *e, size_t n);

/* Cancel a pending event. Returns 1 when it was pending and is now cancelled,
 * 0 when the id is unknown, already ran or was already cancelled. Safe from
 * inside a handler, including for the event being dispatched (returns 0). */
int engine_cancel(engine *e, event_id id);

/* Dispatch the next event, advancing the clock to its time. Returns 1 when an
 * event ran, 0 when none was pending at or before SIM_HORIZON. */
int engine_step(engine *e);

/* Dispatch events in order while the next event's time is <= until_ns and no
 * stop was requested. until_ns is capped at SIM_HORIZON (SIM_FOREVER means
 * "to the horizon"), so the clock never passes it. Afterwards the clock is at until_ns if the queue ran
 * dry before it (and until_ns < SIM_HORIZON), else at the last event's time.
 * "Ran dry" means no event is pending at or before until_ns: events pending
 * after until_ns stay pending and the clock still moves to until_ns. After a
 * stop the clock stays at the last event's time; it never moves backwards.
 * Returns the number of events dispatched by this call. */
uint64_t engine_run(engine *e, sim_time until_ns);

/* Ask engine_run() to return after the current event. Cleared when
 * engine_run() returns. */
void engine_stop(engine *e);

/* Number of events pending (scheduled, not run, not cancelled). */
size_t engine_pending(const engine *e);
/* Time of the next pending event, or SIM_FOREVER when none. */
sim_time engine_next_time(engine *e);
/* Events dispatched since engine_new(). */
uint64_t engine_dispatched(const engine *e);

/* For tests only. The insertion sequence that orders ties is a counter of
 * engine_debug_seq_limit() values; when it runs out, the pending events are
 * renumbered in order (O(n log n), once per ~6.9e10 schedules).
 * engine_debug_set_seq() moves the counter forward (never back, at most to
 * the limit) so a test can reach that renumbering quickly. */
void engine_debug_set_seq(engine *e, uint64_t seq);
uint64_t engine_debug_seq_limit(void);

/* The simulated clock's horizon: 100 Julian years. No event runs later
 * and engine_run() never moves the clock past it, so the clock cannot
 * saturate or wrap (INT64_MAX ns is 292 years, and the sum of two times
 * within the horizon still fits). An event scheduled beyond the horizon
 * (engine_after() saturates at SIM_FOREVER) stays pending and never runs. */
#define SIM_HORIZON_S 3155760000.0
#define SIM_HORIZON ((sim_time)3155760000LL * SIM_NS_PER_S)

/* The one checked conversion of an input's seconds to a clock value:
 * rounds s to whole nanoseconds into *out and returns 0 when s is finite
 * and 0 <= s <= SIM_HORIZON_S; otherwise returns -1 and leaves *out as it
 * was. Callers turn -1 into an error naming the input. */
static inline int sim_ns_from_s(double s, sim_time *out) {
    if (!(s >= 0) || !(s <= SIM_HORIZON_S)) return -1;     /* also NaN */
    *out = (sim_time)(s * 1e9 + 0.5);
    return 0;
}

/* Seconds to a clock value, total: NaN and anything beyond the horizon
 * give SIM_FOREVER (an event there never runs), negatives give 0. Used
 * for values that were range-checked where they entered (with
 * sim_ns_from_s()) and for sums of them, so it never invents a time. */
static inline sim_time sim_from_s(double s) {
    if (!(s <= SIM_HORIZON_S)) return SIM_FOREVER;
    if (!(s > 0)) return 0;
    return (sim_time)(s * 1e9 + 0.5);
}

/* sim_from_s() but at least 1 ns: the delay of a periodic event, which
 * must move the clock forward or it would run forever at one instant. */
static inline sim_time sim_period_from_s(double s) {
    sim_time t = sim_from_s(s);
    return t > 0 ? t : 1;
}

static inline double sim_to_s(sim_time t) { return (double)t / 1e9; }

/* sim_ns_from_s() with the reason: 0 when t_s can be a clock value, else
 * -1 with why = "is not a finite time of at least 0 s" or "is beyond the
 * simulated clock's horizon of 100 years (3.156e+09 s)" (why may be NULL).
 * Callers prefix the input's file, line, element and attribute. */
int engine_check_s(double t_s, char *why, size_t len);

#endif

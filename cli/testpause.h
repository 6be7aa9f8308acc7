/*
 * testpause: a TEST-ONLY hook that makes a command stop at a known point
 * of a simulated run until the test lets it go on, so that tests which
 * interrupt or kill a run (tests/cli_crash.sh) or a sweep (tests/cli_sweep.sh:
 * after its Nth stored run) never race the clock.
 *
 *   CT_TEST_PAUSE_FIFO=PATH   a FIFO the test made (mkfifo). Unset, empty,
 *                             or not a FIFO: the hook does nothing.
 *   CT_TEST_PAUSE_AFTER=N     pause at the Nth metric sample or event at a
 *                             simulated time > 0 (default 1: the first).
 *
 * At that point the program opens PATH for writing (blocking until the
 * test opens it for reading), writes one byte 'P' and closes it; then it
 * opens PATH for reading (blocking until the test opens it for writing)
 * and reads to end of file; then the run goes on. The test reads the byte,
 * does what it came for (kill -INT: the run stops after the current event;
 * kill -KILL), and for a signal that does not end the process, releases the
 * run with `: >PATH`. A signal sent while paused is delivered before the
 * run takes another step: the handler runs when the blocked open() is
 * interrupted (and SA_RESTART restarts it).
 *
 * Not for users: not in --help; documented in docs/robustness.md. Costs
 * nothing when the variable is unset (no sink is subscribed) and one
 * counter per metric callback when set.
 */
#ifndef CT_TESTPAUSE_H
#define CT_TESTPAUSE_H

#include "sim/metrics.h"

/* Subscribe the pause sink to bus b when CT_TEST_PAUSE_FIFO names a FIFO.
 * Returns 0 (also when the hook is off), or -1 when out of memory (the
 * bus is unchanged; the caller reports it). */
int testpause_subscribe(metric_bus *b);

/* Pause now when CT_TEST_PAUSE_FIFO names a FIFO (the handshake above);
 * otherwise return at once. An open, write or read that fails ends the
 * pause early and silently: the hook never fails the command. */
void testpause_point(void);

/* 1 when CT_TEST_PAUSE_FIFO names a FIFO (the hook is on), else 0. */
int testpause_active(void);

/* Count one step of a command that has no simulated clock to watch (a
 * sweep counts its stored runs) and pause at the CT_TEST_PAUSE_AFTER-th
 * (default the first), once. Nothing when the hook is off. */
void testpause_tick(void);

#endif

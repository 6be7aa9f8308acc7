/*
 * cpupeak: one core's peak FLOP/s, measured with a fused multiply-add loop
 * (see cpupeak.c). Internal to hw/.
 */
#ifndef CT_CPUPEAK_H
#define CT_CPUPEAK_H

#include <stddef.h>

/* fp64 and fp32 FLOP/s of the calling thread's core, and the instruction
 * set that reached them ("AVX-512", "AVX2+FMA", "SSE2"). About 0.2 s.
 * Returns 0, or -1 when nothing could be timed. */
int cpupeak_measure(double *fp64, double *fp32, char *isa, size_t isalen);

#endif

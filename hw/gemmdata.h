/*
 * gemmdata: the operands a GPU GEMM is measured on, and the check of its
 * result. Tensor cores multiplying all-zero matrices draw less power and
 * hold higher clocks than on real data (an 8192^3 bf16 GEMM on an H200:
 * 894 TFLOP/s on zeros, 788 on random data; docs/hardware-mode.md), so a
 * measurement runs on random-looking operands: element `index` of operand
 * A or B is a function of a fixed seed and the index alone (splitmix64),
 * the same in every run, computable on the host without keeping the matrix.
 *
 * Each element is +-(1 + f / 2^mb) * 2^e with a random sign, e in -4..-1
 * and all mb mantissa bits f random (mb = the input arithmetic's own: fp64
 * 52, fp32 23, tf32 10, fp16 10, bf16 7, fp8 E4M3 3), so every value is
 * exact in the format the GEMM computes in (tf32 values are fp32 words the
 * tensor cores do not round) and none is subnormal; products of two 16-bit,
 * tf32 or fp8 values are exact in fp32.
 *
 * A result entry C(i,j) is checked against the sum of products computed
 * here in double; gemmdata_tolerance documents the bound.
 */
#ifndef CT_GEMMDATA_H
#define CT_GEMMDATA_H

#include <stddef.h>
#include <stdint.h>

#include "models/catalog.h"

/* What an operand is: A (m x k) or B (k x n). */
enum { GEMMDATA_A = 0, GEMMDATA_B = 1 };

/* Bytes per stored input element: 8 (fp64), 4 (fp32, tf32), 2 (bf16,
 * fp16), 1 (fp8 E4M3); 0 for a precision these GEMMs do not run. */
size_t gemmdata_in_bytes(precision p);

/* Bytes per stored output element: fp64 8, fp32/tf32 4, bf16/fp16 2, fp8 2
 * (bf16 output, as FP8 training recipes write it). */
size_t gemmdata_out_bytes(precision p);

/* Element `index` (in storage order) of operand `which`, as a double
 * (exact) and, when bits is not NULL, the stored word (low bytes used). */
double gemmdata_value(precision p, int which, uint64_t index, uint64_t *bits);

/* Elements [first, first + count) of operand `which` into dst, stored as
 * the precision stores them (little-endian words of gemmdata_in_bytes). */
void gemmdata_fill(precision p, int which, uint64_t first, size_t count, void *dst);

/* A stored output element as a double. */
double gemmdata_decode(precision p, const void *elem);

/* How far a GEMM's C(i,j) may be from the exact sum `want` of k products
 * whose magnitudes sum to `mag` (see gemmdata.c for the derivation). */
double gemmdata_tolerance(precision p, int k, double want, double mag);

/* A GEMM's shape and how its operands are stored (column-major): A(i,p) at
 * i + p*m, or at p + i*k when a_transposed (cuBLASLt's "TN" fp8 layout);
 * B(p,j) at p + j*k; C(i,j) at i + j*m. A grouped GEMM (groups > 1, a
 * mixture-of-experts layer's experts in one batched call) stores its groups
 * one after another, each operand continuing the one sequence of values:
 * group g's A starts at element g*m*k, its B at g*k*n, its C at g*m*n.
 * `group` is the group an entry is expected and checked in. */
typedef struct gemmdata_shape {
    precision prec;
    int m, n, k;
    int a_transposed;
    int groups;                  /* 0 or 1: one GEMM */
    int group;                   /* 0 .. groups-1 */
} gemmdata_shape;

/* Elements of operand `which` over every group. */
uint64_t gemmdata_count(const gemmdata_shape *g, int which);

/* The exact C(i,j) (to double rounding) and the sum of its products'
 * magnitudes. */
void gemmdata_expect(const gemmdata_shape *g, int i, int j, double *want, double *mag);

/* The 16 entries checked: a 4 x 4 grid over C's rows and columns (corners
 * included). Entry s (0..15) is C(*i, *j). */
void gemmdata_grid(const gemmdata_shape *g, int s, int *i, int *j);

/* Check one entry read back as `got`: 0, or -1 with why naming the GEMM,
 * the entry, the values and "(layout or transpose wrong?)". */
int gemmdata_check(const gemmdata_shape *g, int i, int j, double got, char *why, size_t whylen);

#endif

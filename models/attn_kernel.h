/*
 * attn_kernel: how the shape of an attention problem changes what a tiled,
 * fused attention kernel (FlashAttention-2/3/4, cuDNN) costs beyond its
 * FLOPs at head dim 128 (docs/moe-training.md, "Attention at head dim 64
 * and in sliding windows"):
 *
 *   head dim   the catalog's attention efficiencies are measured at head
 *              dim 128; at head dim 64 the same kernels reach a lower
 *              fraction of the peak. attn_kernel_hdim_factor gives the
 *              published ratio (Shah et al., FlashAttention-3, Fig. 5-6).
 *   windows    a kernel computes whole (Bq x Bk) tiles: a query tile of a
 *              sliding-window layer touches every key tile its window
 *              reaches. attn_kernel_window_work counts those tiles against
 *              a full causal layer's (the tile rule of FlashAttention's
 *              block_info, the tile sizes of its kernels).
 *
 * Layers: models/catalog, gpu, transformer <- attn_kernel <- train_layer.
 */
#ifndef CT_ATTN_KERNEL_H
#define CT_ATTN_KERNEL_H

#include "models/catalog.h"
#include "models/gpu.h"

/* The kernel whose head-dim curve applies: FlashAttention-2 (the kernel the
 * catalog's efficiencies were measured with), or FlashAttention-3 (a flash3
 * stack on Hopper). */
typedef enum attn_kernel_family { ATTN_KERNEL_FA2, ATTN_KERNEL_FA3 } attn_kernel_family;

/* Fraction of its head-dim-128 throughput the kernel family reaches in
 * `pass` at `head_dim`: the published ratio at 64, linear between 64 and
 * 128, the ratio at 64 below 64, and 1 at 128 and above. */
double attn_kernel_hdim_factor(attn_kernel_family fam, gpu_attn_pass pass, double head_dim);

/* Tile pairs a causal kernel of bq x bk tiles computes over s queries and
 * keys when each query attends to at most `window` keys before it (window
 * <= 0 or >= s: the whole causal triangle). */
double attn_kernel_tiles(double s, double window, int bq, int bk);

/* The tile shape (query rows bq, key rows bk) of `pass` on GPU g. */
void attn_kernel_tile_shape(const gpu_spec *g, gpu_attn_pass pass, int *bq, int *bk);

/* Work of `pass` per layer of m at sequence s, averaged over the layers, as
 * a fraction of a full causal layer's: 1 for a model without windows
 * shorter than s; each windowed layer counts its tiles over the causal
 * layer's tiles. */
double attn_kernel_window_work(const llm_spec *m, const gpu_spec *g, gpu_attn_pass pass, double s);

#endif

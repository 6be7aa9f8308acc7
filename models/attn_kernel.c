/*
 * attn_kernel: head dim and sliding windows in a tiled attention kernel
 * (see attn_kernel.h; docs/moe-training.md, "Attention at head dim 64 and
 * in sliding windows").
 */
#include "models/attn_kernel.h"

#include <math.h>
#include <string.h>

#include "models/transformer.h"

/* ---- Head dim ------------------------------------------------------------- */

/* Throughput at head dim 64 over head dim 128, BF16 on an H100 SXM5 at 16K
 * tokens, the plateau the catalog's head-dim-128 efficiencies were taken
 * at (docs/attention-passes.md). Shah et al., "FlashAttention-3" (arXiv
 * 2407.08608), Fig. 5 (forward; the same figure is assets/flash3_fp16_fwd.png
 * in Dao-AILab/flash-attention) and Fig. 6 (backward, no mask; the only
 * backward published). TFLOP/s, head dim 64 / head dim 128:
 *   FlashAttention-2  causal forward 299 / 335, unmasked forward 324 / 370,
 *                     backward 291 / 322;
 *   FlashAttention-3  causal forward 473 / 616, unmasked forward 497 / 648,
 *                     backward 474 / 561.
 * Indexed [family][pass] in gpu_attn_pass order. */
static const double HDIM64_RATIO[2][3] = {
    { 299.0 / 335.0, 324.0 / 370.0, 291.0 / 322.0 },
    { 473.0 / 616.0, 497.0 / 648.0, 474.0 / 561.0 },
};

double attn_kernel_hdim_factor(attn_kernel_family fam, gpu_attn_pass pass, double head_dim) {
    if (!(head_dim < 128)) return 1;   /* 128 and above: see attn_kernel.h */
    double r64 = HDIM64_RATIO[fam == ATTN_KERNEL_FA3][pass];
    if (head_dim <= 64) return r64;
    return r64 + (1 - r64) * (head_dim - 64) / 64;
}

/* ---- Sliding windows ---------------------------------------------------------- */

/* Key tiles [n_min, n_max) that query tile mb reaches: FlashAttention's
 * BlockInfo.get_n_block_min_max (flash_attn/cute/block_info.py) with a
 * causal mask (window right 0) and window_size_left = window. */
static double key_tiles(double mb, double s, double window, int bq, int bk) {
    double last = fmin((mb + 1) * bq, s);
    double n_max = ceil(last / bk);
    double n_min = window > 0 ? fmax(floor((mb * bq - window) / bk), 0) : 0;
    return n_max - n_min;
}

double attn_kernel_tiles(double s, double window, int bq, int bk) {
    if (!(s > 0) || bq <= 0 || bk <= 0) return 0;
    if (window >= s) window = 0;
    double tiles = 0, mblocks = ceil(s / bq);
    for (double mb = 0; mb < mblocks; mb++) tiles += key_tiles(mb, s, window, bq, bk);
    return tiles;
}

/* Tile shapes of the open kernels for head dim 64 with a causal or local
 * mask, by GPU generation (cuDNN's, which Transformer Engine runs on
 * Blackwell, are not published):
 *   ampere     FlashAttention-2: forward 128 x 128
 *              (csrc/flash_attn/src/flash_fwd_launch_template.h,
 *              run_mha_fwd_hdim64), backward 128 x 128 (flash_bwd_launch_
 *              template.h, run_mha_bwd_hdim64 with 144 KB of shared memory);
 *   hopper     FlashAttention-3: forward 192 x 128 (hopper/tile_size.h,
 *              tile_size_fwd_sm90, head dim <= 64, causal or local),
 *              backward 128 x 128 (flash_attn/cute/interface.py,
 *              _tile_size_bwd_sm90: "C++ FA3: 128, 128");
 *   blackwell  FlashAttention-4: forward two 128-row query tiles per CTA
 *              over 128 keys (flash_attn/cute/flash_fwd_sm100.py, q_stage 2,
 *              BlockInfo on cta_tiler = 256 x 128), backward 128 x 128
 *              (flash_attn/cute/flash_bwd_sm100.py tile_m, tile_n).
 * Other GPUs: 128 x 128, the size every generation above uses somewhere. */
void attn_kernel_tile_shape(const gpu_spec *g, gpu_attn_pass pass, int *bq, int *bk) {
    *bq = 128;
    *bk = 128;
    if (pass == GPU_ATTN_BWD) return;
    if (strcmp(g->arch, "hopper") == 0) *bq = 192;
    if (strcmp(g->arch, "blackwell") == 0) *bq = 256;
}

double attn_kernel_window_work(const llm_spec *m, const gpu_spec *g, gpu_attn_pass pass, double s) {
    int wl = tf_windowed_layers(m);
    if (wl == 0 || m->layers <= 0 || !(s > m->attn_window)) return 1;
    int bq, bk;
    attn_kernel_tile_shape(g, pass, &bq, &bk);
    double per = attn_kernel_tiles(s, m->attn_window, bq, bk) / attn_kernel_tiles(s, 0, bq, bk);
    return ((m->layers - wl) + wl * per) / m->layers;
}

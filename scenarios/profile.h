/*
 * profile: hardware profile XML, the host model's parameters (models/host.h)
 * as `clustertwin calibrate` writes them and scenarios include them:
 *
 *   <host-profile name="twin-myhost" source="calibrated from out/twin/twin.db">
 *     <param name="copy.dram_bw" value="1.234e10" unit="B/s" stderr="2.1e8"/>
 *     ...
 *   </host-profile>
 *
 * Parameters not listed keep host_profile_default()'s values; an unknown
 * name or a value that is not a finite number >= 0 is an error with file
 * and line. In a scenario, <microbenchmarks> holds either
 * <host-profile href="FILE"/> (FILE relative to the scenario's directory)
 * or the element itself with its <param> children.
 *
 * A profile file may also hold the GPU's calibrated parameters
 * (models/gpu_profile.h), one <gpu-profile> inside <host-profile>:
 *
 *   <gpu-profile gpu="H200-SXM-141GB">
 *     <param name="gpu.gemm.bf16.eff" value="0.83" stderr="0.01"/>
 *   </gpu-profile>
 *
 * gpu= names the catalog GPU; each value must be physical (the bounds of
 * calibrate_gpu_check: an efficiency above 0 and at most 1.5, ...).
 */
#ifndef CT_PROFILE_H
#define CT_PROFILE_H

#include <stddef.h>
#include <stdio.h>

#include "models/failfit.h"
#include "models/gpu_profile.h"
#include "models/host.h"
#include "scenarios/scenario.h"

/* Load a profile file into h. Returns 0, or -1 with err
 * ("file:line: <param name=\"x\">: ...") and h unchanged. */
int profile_load(const char *path, host_profile *h, char *err, size_t errlen);

/* As profile_load, and g (zeroed first; g->gpu "" when the file has no
 * <gpu-profile>) receives the GPU part. */
int profile_load_gpu(const char *path, host_profile *h, gpu_profile *g, char *err, size_t errlen);

/* Fill h (and g, when not NULL) from a <host-profile> element (an xmlNode
 * *; scenarios/ only), file naming it in messages. href is resolved against
 * base_dir. */
int profile_from_element(const void *node, const char *file, const char *base_dir, host_profile *h, gpu_profile *g,
                         char *err, size_t errlen);

/* Price s's GPU with g: g's parameters written into s's catalog entry of
 * g->gpu and of every node type holding it, so microbenchmarks, training
 * and serving of that GPU use them. Nothing to do when g->gpu is "".
 * Returns 0, or -1 with err ("<gpu-profile gpu=...>: the scenario has no
 * node with this GPU; its nodes have ...": the caller says where) and s
 * unchanged. */
int profile_apply_gpu(scenario *s, const gpu_profile *g, char *err, size_t errlen);

/* Write h as a profile document to f (the caller opens and finishes the
 * file: cli/ does it through reports/fileout, so that nothing is half
 * written). stderr_of may be NULL, else one entry per host_param_names()
 * in the same order, NaN for parameters not fitted (they are written
 * without stderr); g, when not NULL and not empty, is written as the
 * <gpu-profile> element. comment: a few lines written as an XML comment at the
 * top (NULL = none). Every text is escaped into well-formed XML. Returns 0,
 * or -1 with err set: a parameter that is not finite (nothing written) or
 * a write error on f. */
int profile_write(FILE *f, const host_profile *h, const double *stderr_of, const gpu_profile *g, const char *comment,
                  char *err, size_t errlen);

/* Write a fitted failure profile (models/failfit.h rows; `clustertwin
 * fit-failures`) as a <failures> document whose <failure component= cause=
 * mtbf= mttr=> elements a scenario's <failures> takes as they are: one per
 * row with at least one event (a row without any has no MTBF to write).
 * comment as in profile_write. Returns 0, or -1 with err on a write error. */
int profile_write_failures(FILE *f, const failfit_row *rows, int n, const char *comment, char *err, size_t errlen);

#endif

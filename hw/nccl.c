/* placeholder, replaced below */
#include "hw/backend_impl.h"
#include <stdio.h>
static int o_(hw_backend *b, char *err, size_t errlen) { (void)b; snprintf(err, errlen, "nccl: TODO"); return -1; }
static int m_(hw_backend *b, const mb_case *c, mb_measurement *m, char *why, size_t whylen) { (void)b; (void)c; (void)m; (void)why; (void)whylen; return HW_UNSUPPORTED; }
static void c_(hw_backend *b) { (void)b; }
const hw_ops hw_nccl_ops = { "nccl", o_, m_, c_ };

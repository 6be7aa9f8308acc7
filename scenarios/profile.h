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
 */
#ifndef CT_PROFILE_H
#define CT_PROFILE_H

#include <stddef.h>
#include <stdio.h>

#include "models/host.h"

/* Load a profile file into h. Returns 0, or -1 with err
 * ("file:line: <param name=\"x\">: ...") and h unchanged. */
int profile_load(const char *path, host_profile *h, char *err, size_t errlen);

/* Fill h from a <host-profile> element (an xmlNode *; scenarios/ only),
 * file naming it in messages. href is resolved against base_dir. */
int profile_from_element(const void *node, const char *file, const char *base_dir, host_profile *h, char *err,
                         size_t errlen);

/* Write h as a profile document to f (the caller opens and finishes the
 * file: cli/ does it through reports/fileout, so that nothing is half
 * written). stderr_of may be NULL, else one entry per host_param_names()
 * in the same order, NaN for parameters not fitted (they are written
 * without stderr). comment: a few lines written as an XML comment at the
 * top (NULL = none). Every text is escaped into well-formed XML. Returns 0,
 * or -1 with err set: a parameter that is not finite (nothing written) or
 * a write error on f. */
int profile_write(FILE *f, const host_profile *h, const double *stderr_of, const char *comment, char *err,
                  size_t errlen);

#endif

/*
 * sweepreport: a sweep's results, each metric against the varied values,
 * with its spread across replicas (mean, p10, p90, and how many runs),
 * the 95% confidence interval of the mean, and the points that do not fit.
 *
 *   text  sweepreport_table(): one table per metric, for the terminal
 *         (`clustertwin sweep` prints it when the sweep ends)
 *   html  DIR/index.html in the run report's style: each metric titled
 *         by its name ("GPU utilisation", "Cost"; the JSON path beside
 *         it), the best point stated in a sentence where the metric has a
 *         direction (cost: lower is better; utilisation: higher), a chart
 *         per metric (gnuplot SVG: the mean as a line, p10..p90 as error
 *         bars, one line per value of the other varied paths), a heatmap
 *         (hmN.svg: the grid coloured by the mean, the values in the
 *         cells) when exactly two paths are varied, and the tables
 *   md    DIR/report.md, the best points and the tables
 *   csv   DIR/sweep.csv, one row per (point, metric)
 *
 * The metrics: simulated_s, cluster cost, utilisation and energy, failures,
 * and for each training job, service and queue of the scenario its
 * headline figures (end_s, ettr, lost_work_s, ...; ttft_p99_s, ...). A
 * metric with the same value everywhere is listed once, not charted.
 */
#ifndef CT_SWEEPREPORT_H
#define CT_SWEEPREPORT_H

#include <stdint.h>
#include <stdio.h>

#include "reports/report.h"
#include "reports/rundata.h"
#include "reports/store.h"

/* Print the tables of sweep (0: the latest) to f. 0, or 1 when the
 * database could not be read (a line on f says so). */
int sweepreport_table(store *st, int64_t sweep, FILE *f);

/* Record in the database (sweep_stats) every point's mean of every
 * metric with its 95% confidence interval (one transaction). 0, or 1
 * with err set. */
int sweepreport_store_stats(store *st, int64_t sweep, char *err, size_t errlen);

/* Write the report of sweep (0: the latest) in o->format to o->out_dir;
 * statuses as report_write. sweepreport_write_from reads through a reader
 * already open (report_write's). */
int sweepreport_write_from(rundata_db *rd, int64_t sweep, const report_opts *o, char *main_file, size_t mainlen,
                           char *notes, size_t noteslen, char *err, size_t errlen);
int sweepreport_write(store *st, int64_t sweep, const report_opts *o, char *main_file, size_t mainlen, char *notes,
                      size_t noteslen, char *err, size_t errlen);

#endif

/*
 * topo: draw a scenario's cluster (spine, leaves, node groups, NICs and
 * link speeds, storage, spares) as Graphviz source or SVG.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "reports/topo.h"
#include "scenarios/scenario.h"

static const char help[] =
    "usage: clustertwin topo FILE --out PATH\n"
    "\n"
    "Draw the cluster of the scenario in FILE: spine, leaf switches, node groups\n"
    "(nodes per leaf from <network nodes-per-leaf>, default 32), NICs per node and\n"
    "link speeds, storage systems and their bandwidth, warm spares and cloud nodes.\n"
    "Large clusters are summarised (identical leaf groups drawn once, labelled xN).\n"
    "  --out PATH      output file; its extension picks the format:\n"
    "                  .svg (laid out with Graphviz dot) or .dot/.gv (Graphviz source)\n"
    "Exit status: 0 ok, 1 the file could not be written, 2 bad input.\n";

int cmd_topo(int argc, char **argv) {
    const char *file = NULL, *out = NULL;
    const cli_option opts[] = {
        { "--out", NULL, CLI_VALUE, &out, "the drawing: .svg, .dot or .gv" },
        { NULL },
    };
    cli_spec spec = { "topo", help, opts, CLI_ONE_FILE, &file, NULL };
    int prc = cli_parse(&spec, argc, argv);
    if (prc != CLI_GO) return prc;
    if (!file) return cli_usage_error("topo", "missing scenario FILE");
    if (!out) return cli_usage_error("topo", "missing --out PATH (.svg, .dot or .gv)");
    const char *dot = strrchr(out, '.'), *slash = strrchr(out, '/');
    if (!dot || (slash && dot < slash) || (strcmp(dot, ".svg") && strcmp(dot, ".dot") && strcmp(dot, ".gv")))
        return cli_usage_error("topo", "--out %s: expected a .svg, .dot or .gv file", out);

    char err[2048];
    scenario *s = NULL;
    if (scenario_load(file, &s, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return EXIT_BAD_INPUT;
    }
    int rc = EXIT_OK;
    if (topo_write(s, out, err, sizeof err) < 0) {
        fprintf(stderr, "clustertwin topo: %s\n", err);
        rc = EXIT_RUN_FAILED;
    } else {
        printf("wrote %s: %d nodes, %d GPUs\n", out, scenario_node_count(s), scenario_gpus(s));
    }
    scenario_free(s);
    return rc;
}

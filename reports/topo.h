/*
 * topo: a drawing of a scenario's cluster (Graphviz).
 *
 * Spine or core switch, leaf switches with the node groups under them
 * (nodes per leaf: <network nodes-per-leaf>, else the fabric's default),
 * NICs per node and link speeds on the edges, storage systems with their
 * bandwidth, warm spares and cloud burst nodes. Each node group sits in a
 * dashed cluster naming its racks and NVLink domain (a GB200 NVL72 rack of
 * 18 trays is one 72-GPU domain; HGX nodes are drawn 4 to a rack, their
 * domain the node: sim/cluster.h). Large clusters are
 * summarised: with more than TOPO_LEAVES_DRAWN leaves, identical leaf
 * groups of a node type become one leaf box and one group box labelled
 * "×N", so a 2,048-node cluster is a handful of boxes, not 16K. The graph
 * never has more than TOPO_MAX_GRAPH_NODES nodes whatever the scenario.
 *
 * Output by the file's extension: .dot or .gv (Graphviz source, cgraph's
 * agwrite) or .svg (laid out with dot, rendered by Graphviz's own SVG
 * renderer). The layout and SVG plugins are loaded from the libgvc
 * install directly, without the plugin configuration file that `dot -c`
 * writes; when they cannot be found that way the configuration is used.
 */
#ifndef CT_TOPO_H
#define CT_TOPO_H

#include <stddef.h>

#include "scenarios/scenario.h"

#define TOPO_LEAVES_DRAWN 8          /* up to this many leaves, each is drawn */
#define TOPO_MAX_NODE_TYPES 24       /* <nodes> entries drawn; the rest merged into one box */
#define TOPO_MAX_STORAGE 12          /* storage systems drawn; the rest merged into one box */
#define TOPO_MAX_GRAPH_NODES 128     /* bound on graph nodes (checked) */

/* Draw the scenario's cluster to path (.dot, .gv or .svg). The file is
 * written by reports/fileout's rule (a file atomically, a device or FIFO in
 * place, a symlink followed). Returns 0, or
 * -1 with err set to one line ("out/x.png: unknown output type '.png':
 * expected .dot, .gv or .svg", "cannot write ...", "Graphviz: ..."); on
 * error the target file is left as it was. Never prints. */
int topo_write(const scenario *s, const char *path, char *err, size_t errlen);

#endif

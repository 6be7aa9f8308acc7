/*
 * live: the records of a live cluster's state (see live.h).
 */
#include "scenarios/live.h"

#include <stdlib.h>
#include <string.h>

#include "base/grow.h"

#define LIVE_ADD(c, arr, n, cap)                                                \
    do {                                                                        \
        if (GROW((c)->arr, (c)->cap, (size_t)(c)->n + 1)) return NULL;          \
        memset(&(c)->arr[(c)->n], 0, sizeof *(c)->arr);                         \
        return &(c)->arr[(c)->n++];                                             \
    } while (0)

live_node *live_add_node(live_cluster *c) { LIVE_ADD(c, nodes, n_nodes, cap_nodes); }
live_job *live_add_job(live_cluster *c) { LIVE_ADD(c, jobs, n_jobs, cap_jobs); }
live_partition *live_add_partition(live_cluster *c) { LIVE_ADD(c, parts, n_parts, cap_parts); }
live_history *live_add_history(live_cluster *c) { LIVE_ADD(c, history, n_history, cap_history); }

int live_set(char **dst, const char *z) {
    char *s = strdup(z ? z : "");
    if (!s) return -1;
    free(*dst);
    *dst = s;
    return 0;
}

void live_free(live_cluster *c) {
    if (!c) return;
    for (int i = 0; i < c->n_nodes; i++) {
        live_node *n = &c->nodes[i];
        free(n->name), free(n->gpu_model), free(n->reason), free(n->partitions);
    }
    for (int i = 0; i < c->n_jobs; i++) {
        live_job *j = &c->jobs[i];
        free(j->id), free(j->name), free(j->user), free(j->account), free(j->partition);
        free(j->reason), free(j->node_list), free(j->after);
    }
    for (int i = 0; i < c->n_parts; i++) free(c->parts[i].name);
    for (int i = 0; i < c->n_history; i++) {
        live_history *h = &c->history[i];
        free(h->user), free(h->account), free(h->id), free(h->name), free(h->partition);
        free(h->state), free(h->node_list);
    }
    free(c->nodes), free(c->jobs), free(c->parts), free(c->history), free(c->source);
    memset(c, 0, sizeof *c);
}

/*
 * serving_router: which replica a request goes to. The router sends it to
 * the ready replica with the fewest outstanding tokens (preferring one that
 * holds its model) or round-robin; with none ready it waits in `pending`
 * until one is (sv_route_pending). A replica that gets a request is kicked
 * (serving_core.c). O(replicas) per request.
 */
#include "sim/serving_int.h"

static int routable(const replica *r) { return r->state == R_READY; }

/* The replica a request goes to; -1 when none is ready. */
static int route_pick(serving *sv, int model) {
    int best = -1;
    if (!sv->least) {
        for (int k = 0; k < sv->n_reps; k++) {
            int i = (sv->rr + k) % sv->n_reps;
            if (routable(&sv->reps[i])) {
                sv->rr = (i + 1) % sv->n_reps;
                return i;
            }
        }
        return -1;
    }
    /* Least outstanding tokens, among replicas holding the model first. */
    for (int pass = 0; pass < 2 && best < 0; pass++)
        for (int i = 0; i < sv->n_reps; i++) {
            const replica *r = &sv->reps[i];
            if (!routable(r)) continue;
            if (pass == 0 && sv->n_models > 1 && r->ms[model].resident == M_UNLOADED) continue;
            if (best < 0 || r->outstanding < sv->reps[best].outstanding) best = i;
        }
    return best;
}

/* Queue request i on replica r, behind the others of its model. */
static void enqueue(replica *r, int32_t i) {
    serving *sv = r->sv;
    req *q = &sv->rq[i];
    list_push_back(sv->rq, &r->ms[q->model].queue, i);
    r->outstanding += q->input + q->output;
    sv_kick(r);
}

void sv_route(serving *sv, int32_t i) {
    int k = route_pick(sv, sv->rq[i].model);
    if (k < 0) list_push_back(sv->rq, &sv->pending, i);
    else enqueue(&sv->reps[k], i);
}

void sv_route_pending(serving *sv) {
    while (sv->pending.n > 0) {
        int32_t i = sv->pending.head;
        int k = route_pick(sv, sv->rq[i].model);
        if (k < 0) return;
        list_remove(sv->rq, &sv->pending, i);
        enqueue(&sv->reps[k], i);
    }
}

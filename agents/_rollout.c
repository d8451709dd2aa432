/*
 * The Python binding of the C searches: jekyll_hyde_agents._rollout.
 *
 * The rules are jekyll_hyde_env/core/jh_rules.h, the project's one C statement
 * of RULES.md, shared with the batched environment, and what each player
 * knows is jekyll_hyde_env/core/jh_information.h. The searches are one header
 * each: _ismcts.h (information-set MCTS), _az.h (network-guided search),
 * _pimc.h (PIMC's round solver) and _label.h (the self-play games that label
 * expert iteration's data); this file turns Python arguments into their
 * inputs and their results into Python objects. jekyll_hyde_env.engine is the
 * readable reference: tests/test_rollout_core.py drives random games through
 * the core and the engine in lockstep.
 *
 * A state crosses the boundary as the tuple of jh_pystate.h (made by
 * jekyll_hyde_agents.rollout.to_core); a player's view as the search spec of
 * jh_information.h (made by jekyll_hyde_agents.rollout.search_spec, or here from a full
 * state by jh_view_spec_fields).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_az.h"
#include "_heuristic.h"
#include "_ismcts.h"
#include "_label.h"
#include "_net.h"
#include "_pimc.h"
#include "_search.h"
#include "jh_information.h"
#include "jh_observe.h"
#include "jh_pystate.h"
#include "jh_rules.h"

/* --- Python functions ------------------------------------------------- */

static PyObject *py_legal_mask(PyObject *self, PyObject *arg) {
    State s; JhVariant s_variant;
    if (jh_unpack_state(arg, &s, &s_variant) < 0) return NULL;
    return PyLong_FromUnsignedLong(jh_legal_mask(&s));
}

static PyObject *py_apply(PyObject *self, PyObject *args) {
    PyObject *t; int a; State s; JhVariant s_variant;
    if (!PyArg_ParseTuple(args, "Oi", &t, &a) || jh_unpack_state(t, &s, &s_variant) < 0) return NULL;
    if (jh_apply(&s, a) < 0) {
        PyErr_Format(PyExc_ValueError, "action %d is not legal in this core state", a);
        return NULL;
    }
    return jh_pack_state(&s);
}

/* heuristic_action(state) -> the C heuristic's action (agents/_heuristic.h). */
static PyObject *py_heuristic_action(PyObject *self, PyObject *arg) {
    State s; JhVariant s_variant;
    if (jh_unpack_state(arg, &s, &s_variant) < 0) return NULL;
    if (s.phase == GAME_OVER) {
        PyErr_SetString(PyExc_ValueError, "heuristic_action: the game is over");
        return NULL;
    }
    return PyLong_FromLong(heuristic_action(&s));
}

/* Plays uniformly random legal actions to the end of the game `n` times from
 * the same state; returns the number of games Hyde won. */
static PyObject *py_rollouts(PyObject *self, PyObject *args) {
    PyObject *t; unsigned long long seed; int n; State start; JhVariant start_variant;
    if (!PyArg_ParseTuple(args, "OKi", &t, &seed, &n) || jh_unpack_state(t, &start, &start_variant) < 0) return NULL;
    uint64_t rng = seed;
    int hyde_wins = 0;
    for (int i = 0; i < n; i++) {
        State s = start;
        while (s.phase != GAME_OVER) jh_apply(&s, jh_random_legal(jh_legal_mask(&s), &rng));
        hyde_wins += s.winner;
    }
    return PyLong_FromLong(hyde_wins);
}

/* Reads a search spec into sp; a variant's fields (after the spec's) go to *variant,
 * which must outlive sp. */
static int unpack_spec(PyObject *t, JhSpec *sp, JhVariant *variant) {
    long v[JH_SPEC_FIELDS];
    const JhVariant *game;
    if (jh_read_fields(t, JH_SPEC_FIELDS, v, variant, &game, "a search spec") < 0) return -1;
    if (jh_spec_from_fields(v, sp, game) < 0) {
        PyErr_SetString(PyExc_ValueError, "search spec out of range or inconsistent");
        return -1;
    }
    return 0;
}

/* view_spec(state, player) -> the search spec of the player's view, as a tuple. */
static PyObject *py_view_spec(PyObject *self, PyObject *args) {
    PyObject *t; int player; State s; JhVariant s_variant; long v[JH_SPEC_FIELDS];
    if (!PyArg_ParseTuple(args, "Oi", &t, &player) || jh_unpack_state(t, &s, &s_variant) < 0) return NULL;
    if (player != 0 && player != 1) {
        PyErr_Format(PyExc_ValueError, "player must be 0 (Jekyll) or 1 (Hyde), got %d", player);
        return NULL;
    }
    jh_view_spec_fields(&s, player, v);
    return jh_build_fields(v, JH_SPEC_FIELDS, s.variant);  /* a variant's fields follow */
}

/* determinise(spec, seed) -> a core state drawn from the worlds the view admits. */
static PyObject *py_determinise(PyObject *self, PyObject *args) {
    PyObject *t; unsigned long long seed; JhSpec sp; JhVariant sp_variant; State w;
    if (!PyArg_ParseTuple(args, "OK", &t, &seed) || unpack_spec(t, &sp, &sp_variant) < 0) return NULL;
    uint64_t rng = seed;
    if (jh_determinise(&sp, &rng, &w) < 0) {
        PyErr_SetString(PyExc_ValueError, "the search spec admits no world");
        return NULL;
    }
    return jh_pack_state(&w);
}

static Net *get_net(PyObject *capsule);

/* ismcts(spec, n, c, seed, budget[, target_kind, target_net, playout_kind]) ->
 * (visits, wins, available, simulations): SO-ISMCTS from the view that `spec`
 * describes, with n simulations at most and `budget` seconds at most (0: no
 * limit). The first three are tuples of 28 ints, the statistics of the root's
 * child for each action (0 where the search never tried it). A target kind
 * (TARGET_RANDOM .. TARGET_NETWORK, the last with a network from make_net)
 * makes it a best-response search against that opponent policy; the target
 * plays its playouts by `playout_kind` (default: the same policy). */
static PyObject *py_ismcts(PyObject *self, PyObject *args) {
    PyObject *t, *net = Py_None; int n; double c, budget; unsigned long long seed; JhSpec sp; JhVariant sp_variant;
    Target tg = {0, TARGET_NONE, -2, NULL};
    if (!PyArg_ParseTuple(args, "OidKd|iOi", &t, &n, &c, &seed, &budget, &tg.kind, &net,
                          &tg.playout_kind) ||
        unpack_spec(t, &sp, &sp_variant) < 0)
        return NULL;
    if (n < 1 || c < 0 || budget < 0) {
        PyErr_SetString(PyExc_ValueError, "ismcts needs n >= 1, c >= 0 and budget >= 0");
        return NULL;
    }
    if (tg.playout_kind == -2) tg.playout_kind = tg.kind;
    if (tg.kind < TARGET_NONE || tg.kind > TARGET_NETWORK ||
        tg.playout_kind < TARGET_NONE || tg.playout_kind > TARGET_NETWORK ||
        (tg.kind == TARGET_NONE) != (tg.playout_kind == TARGET_NONE)) {
        PyErr_Format(PyExc_ValueError,
                     "target kinds %d, %d: expected -1 (none) for both, or 0 (random) to "
                     "3 (network) for both", tg.kind, tg.playout_kind);
        return NULL;
    }
    if ((tg.kind == TARGET_NETWORK || tg.playout_kind == TARGET_NETWORK) &&
        (tg.net = get_net(net)) == NULL)
        return NULL;
    tg.seat = 1 - sp.player;
    Tree tree = {NULL, 0, n < 4096 ? n + 1 : 4096};
    tree.nodes = malloc(sizeof(Node) * (size_t)tree.capacity);
    if (tree.nodes == NULL) return PyErr_NoMemory();
    int done;
    Py_BEGIN_ALLOW_THREADS
    done = run_ismcts(&sp, n, c, budget, seed, &tree, &tg);
    Py_END_ALLOW_THREADS
    if (done < 0) {
        free(tree.nodes);
        if (done == -1) return PyErr_NoMemory();
        PyErr_SetString(PyExc_ValueError, "the search spec admits no world");
        return NULL;
    }
    PyObject *stats[3];
    for (int k = 0; k < 3; k++) {
        stats[k] = PyTuple_New(NUM_ACTIONS);
        for (int a = 0; a < NUM_ACTIONS && stats[k] != NULL; a++) {
            int idx = tree.nodes[0].child[a];
            long value = 0;
            if (idx) value = k == 0 ? tree.nodes[idx].visits
                           : k == 1 ? tree.nodes[idx].wins : tree.nodes[idx].available;
            PyObject *item = PyLong_FromLong(value);
            if (item == NULL) { Py_CLEAR(stats[k]); break; }
            PyTuple_SET_ITEM(stats[k], a, item);
        }
    }
    free(tree.nodes);
    if (stats[0] == NULL || stats[1] == NULL || stats[2] == NULL) {
        for (int k = 0; k < 3; k++) Py_XDECREF(stats[k]);
        return NULL;
    }
    return Py_BuildValue("(NNNi)", stats[0], stats[1], stats[2], done);
}

/* solve_round(state, table, max_nodes) -> (values, nodes): for each action
 * legal in `state`, Hyde's value after it under perfect-information minimax to
 * the end of the round (None where illegal); None instead of the values when
 * the search needed more than max_nodes nodes. `table` holds 44 floats:
 * Hyde's chances at the start of round r (0..3) with the marker on m (0..10),
 * at index 11 * r + m. */
static PyObject *py_solve_round(PyObject *self, PyObject *args) {
    PyObject *t, *table; long max_nodes; State s; JhVariant s_variant;
    if (!PyArg_ParseTuple(args, "OOl", &t, &table, &max_nodes) || jh_unpack_state(t, &s, &s_variant) < 0)
        return NULL;
    if (s.phase == GAME_OVER) {
        PyErr_SetString(PyExc_ValueError, "the game is over: nothing to solve");
        return NULL;
    }
    Search S;
    PyObject *seq = PySequence_Fast(table, "table must be a sequence of 44 floats");
    if (seq == NULL) return NULL;
    if (PySequence_Fast_GET_SIZE(seq) != (MAX_ROUNDS + 1) * (TRACK_END + 1)) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "table must hold 44 floats (4 rounds x 11 spaces)");
        return NULL;
    }
    for (int r = 0; r <= MAX_ROUNDS; r++)
        for (int m = 0; m <= TRACK_END; m++) {
            double v = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(seq, r * (TRACK_END + 1) + m));
            if (v == -1.0 && PyErr_Occurred()) { Py_DECREF(seq); return NULL; }
            S.table[r][m] = v;
        }
    Py_DECREF(seq);
    if (tt_table == NULL) {
        tt_table = calloc((size_t)1 << TT_BITS, sizeof(TTEntry));
        if (tt_table == NULL) return PyErr_NoMemory();
    }
    if (++tt_stamp == 0) {          /* the stamps wrapped: start from a clean table */
        memset(tt_table, 0, sizeof(TTEntry) << TT_BITS);
        tt_stamp = 1;
    }
    S.tt = tt_table; S.stamp = tt_stamp;
    S.nodes = 0; S.max_nodes = max_nodes; S.round = s.round; S.aborted = 0;
    uint32_t moves = jh_legal_mask(&s);
    double values[NUM_ACTIONS];
    /* The GIL stays held: the shared table allows one search at a time. */
    for (int m = 0; m < NUM_ACTIONS && !S.aborted; m++) {
        if (!((moves >> m) & 1)) continue;
        State c = s;
        jh_apply(&c, m);
        /* The root's pick may be any card: the picks after it start from the lowest. */
        values[m] = solve(&S, &c, 0, 0.0, 1.0);
    }
    PyObject *result;
    if (S.aborted) {
        result = Py_None; Py_INCREF(result);
    } else {
        result = PyTuple_New(NUM_ACTIONS);
        if (result == NULL) return NULL;
        for (int m = 0; m < NUM_ACTIONS; m++) {
            PyObject *v = (moves >> m) & 1 ? PyFloat_FromDouble(values[m]) : (Py_INCREF(Py_None), Py_None);
            if (v == NULL) { Py_DECREF(result); return NULL; }
            PyTuple_SET_ITEM(result, m, v);
        }
    }
    return Py_BuildValue("(Nl)", result, S.nodes);
}

/* --- networks as Python objects ------------------------------------------ */

static void net_capsule_free(PyObject *capsule) {
    net_free(PyCapsule_GetPointer(capsule, "jekyll_hyde_agents._rollout.Net"));
}

/* Views a buffer of exactly n contiguous float32 values, for the caller to
 * release. Returns 0, or -1 with an exception set. */
static int view_floats(PyObject *obj, Py_ssize_t n, const char *what, Py_buffer *view) {
    if (PyObject_GetBuffer(obj, view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) return -1;
    if (view->itemsize != 4 || view->format == NULL || strcmp(view->format, "f") != 0 ||
        view->len != n * 4) {
        PyErr_Format(PyExc_ValueError, "%s must be %zd contiguous float32 values", what, n);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* make_net(layers, relu, value) -> a network for az_search and net_forward.
 * layers: a sequence of (weight float32 (out, in), bias float32 (out,), out,
 * in); value: None or (weight float32 (hidden,), bias float). */
static PyObject *py_make_net(PyObject *self, PyObject *args) {
    PyObject *layers, *value;
    int relu;
    if (!PyArg_ParseTuple(args, "OpO", &layers, &relu, &value)) return NULL;
    PyObject *seq = PySequence_Fast(layers, "layers must be a sequence");
    if (seq == NULL) return NULL;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(seq);
    if (count < 1 || count > NET_MAX_LAYERS) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "a network has 1 to %d layers, got %zd", NET_MAX_LAYERS,
                     count);
        return NULL;
    }
    Net *net = net_new(relu);
    if (net == NULL) { Py_DECREF(seq); return PyErr_NoMemory(); }
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *w, *b;
        int out, in;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, k), "OOii", &w, &b, &out, &in))
            goto fail;
        int last = k == count - 1;
        if (in != net->sizes[k] || out < 1 || out > NET_MAX_WIDTH ||
            (last && out != JH_NUM_ACTIONS)) {
            PyErr_Format(PyExc_ValueError,
                         "layer %zd is %d x %d: it must read %d inputs and give %s outputs",
                         k, out, in, net->sizes[k], last ? "28" : "at most 4096");
            goto fail;
        }
        Py_buffer wv, bv;
        if (view_floats(w, (Py_ssize_t)out * in, "a weight", &wv) < 0) goto fail;
        if (view_floats(b, out, "a bias", &bv) < 0) { PyBuffer_Release(&wv); goto fail; }
        int added = net_add_layer(net, wv.buf, bv.buf, out, in);
        PyBuffer_Release(&wv);
        PyBuffer_Release(&bv);
        if (added < 0) { PyErr_NoMemory(); goto fail; }
    }
    if (value != Py_None) {
        PyObject *vw;
        double vb;
        Py_buffer view;
        if (count < 2) {
            PyErr_SetString(PyExc_ValueError, "a value head needs at least one hidden layer");
            goto fail;
        }
        if (!PyArg_ParseTuple(value, "Od", &vw, &vb)) goto fail;
        if (view_floats(vw, net->sizes[count - 1], "the value weights", &view) < 0) goto fail;
        net_set_value(net, view.buf, (float)vb);
        PyBuffer_Release(&view);
    }
    Py_DECREF(seq);
    PyObject *capsule = PyCapsule_New(net, "jekyll_hyde_agents._rollout.Net", net_capsule_free);
    if (capsule == NULL) net_free(net);
    return capsule;
fail:
    Py_DECREF(seq);
    net_free(net);
    return NULL;
}

static Net *get_net(PyObject *capsule) {
    return PyCapsule_GetPointer(capsule, "jekyll_hyde_agents._rollout.Net");
}

/* net_forward(net, observation bytes) -> (28 logits, value). */
static PyObject *py_net_forward(PyObject *self, PyObject *args) {
    PyObject *capsule;
    Py_buffer obs;
    if (!PyArg_ParseTuple(args, "Oy*", &capsule, &obs)) return NULL;
    Net *net = get_net(capsule);
    if (net == NULL || obs.len != JH_OBS_SIZE) {
        PyBuffer_Release(&obs);
        if (net != NULL) PyErr_Format(PyExc_ValueError, "an observation has %d bytes", JH_OBS_SIZE);
        return NULL;
    }
    float logits[NUM_ACTIONS], value;
    net_forward(net, obs.buf, logits, &value);
    PyBuffer_Release(&obs);
    PyObject *out = PyTuple_New(NUM_ACTIONS);
    if (out == NULL) return NULL;
    for (int a = 0; a < NUM_ACTIONS; a++) {
        PyObject *item = PyFloat_FromDouble(logits[a]);
        if (item == NULL) { Py_DECREF(out); return NULL; }
        PyTuple_SET_ITEM(out, a, item);
    }
    return Py_BuildValue("(Nd)", out, (double)value);
}

/* az_search(spec, n, seed, budget, net_jekyll, net_hyde, c_puct, value_weight, fpu
 *           [, playout_kind, gumbel_k]) -> (visits, values, priors, simulations, policy,
 *           action):
 * network-guided ISMCTS from the view of `spec`; visits and values (summed win
 * chances of the root player) per action and the root's priors are tuples of
 * 28. playout_kind: 0 random playouts (the default), 2 heuristic ones.
 * gumbel_k 0 (the default): PUCT at the root, `policy` the visit shares and
 * `action` -1; above 0: Gumbel root selection among at most gumbel_k actions
 * (run_az_gumbel), `policy` its improved policy and `action` its move. */
static PyObject *py_az_search(PyObject *self, PyObject *args) {
    PyObject *t, *nj, *nh;
    int n;
    unsigned long long seed;
    double budget, c_puct, value_weight, fpu;
    int playout_kind = TARGET_RANDOM, gumbel_k = 0;
    JhSpec sp; JhVariant sp_variant;
    if (!PyArg_ParseTuple(args, "OiKdOOddd|ii", &t, &n, &seed, &budget, &nj, &nh, &c_puct,
                          &value_weight, &fpu, &playout_kind, &gumbel_k) ||
        unpack_spec(t, &sp, &sp_variant) < 0)
        return NULL;
    if (playout_kind != TARGET_RANDOM && playout_kind != TARGET_HEURISTIC) {
        PyErr_Format(PyExc_ValueError,
                     "az_search playout_kind must be 0 (random) or 2 (heuristic), got %d",
                     playout_kind);
        return NULL;
    }
    AZSettings az = {{get_net(nj), get_net(nh)}, c_puct, value_weight, fpu, playout_kind};
    if (az.nets[0] == NULL || az.nets[1] == NULL) return NULL;
    if (n < 1 || c_puct < 0 || budget < 0 || value_weight < 0 || value_weight > 1 ||
        gumbel_k < 0) {
        PyErr_SetString(PyExc_ValueError,
                        "az_search needs n >= 1, c_puct >= 0, budget >= 0, 0 <= value_weight <= 1 "
                        "and gumbel_k >= 0");
        return NULL;
    }
    if (value_weight > 0 && (!az.nets[0]->has_value || !az.nets[1]->has_value)) {
        PyErr_SetString(PyExc_ValueError,
                        "value_weight > 0 needs networks with a value head");
        return NULL;
    }
    AZTree tree = {NULL, 0, n < 4096 ? n + 2 : 4096};
    tree.nodes = malloc(sizeof(AZNode) * (size_t)tree.capacity);
    if (tree.nodes == NULL) return PyErr_NoMemory();
    int done;
    AZChoice choice = {-1, {0}};
    Py_BEGIN_ALLOW_THREADS
    done = gumbel_k > 0 ? run_az_gumbel(&sp, &az, n, gumbel_k, budget, seed, &tree, &choice)
                        : run_az(&sp, &az, n, budget, seed, &tree);
    Py_END_ALLOW_THREADS
    if (done < 0) {
        free(tree.nodes);
        if (done == -1) return PyErr_NoMemory();
        PyErr_SetString(done == -2 ? PyExc_ValueError : PyExc_RuntimeError,
                        done == -2 ? "the search spec admits no world"
                                   : "a search path grew deeper than any game");
        return NULL;
    }
    PyObject *visits = PyTuple_New(NUM_ACTIONS), *values = PyTuple_New(NUM_ACTIONS),
             *priors = PyTuple_New(NUM_ACTIONS), *policy = PyTuple_New(NUM_ACTIONS);
    if (visits == NULL || values == NULL || priors == NULL || policy == NULL) {
        Py_XDECREF(visits); Py_XDECREF(values); Py_XDECREF(priors); Py_XDECREF(policy);
        free(tree.nodes);
        return NULL;
    }
    const AZNode *root = &tree.nodes[0];
    if (gumbel_k == 0) {             /* PUCT's policy target: the root's visit shares */
        int total = 0;
        for (int a = 0; a < NUM_ACTIONS; a++)
            if ((root->child_mask >> a) & 1) total += tree.nodes[root->child[a]].visits;
        for (int a = 0; a < NUM_ACTIONS; a++)
            choice.policy[a] = (root->child_mask >> a) & 1 && total > 0
                                   ? (float)tree.nodes[root->child[a]].visits / total
                                   : 0.0f;
    }
    int failed = 0;
    for (int a = 0; a < NUM_ACTIONS && !failed; a++) {
        long v = 0;
        double w = 0.0;
        if ((root->child_mask >> a) & 1) {
            v = tree.nodes[root->child[a]].visits;
            w = tree.nodes[root->child[a]].value;
        }
        PyObject *items[4] = {PyLong_FromLong(v), PyFloat_FromDouble(w),
                              PyFloat_FromDouble(root->prior[a]),
                              PyFloat_FromDouble(choice.policy[a])};
        PyObject *tuples[4] = {visits, values, priors, policy};
        for (int k = 0; k < 4; k++) {
            if (items[k] == NULL) failed = 1;
            else PyTuple_SET_ITEM(tuples[k], a, items[k]);
        }
    }
    free(tree.nodes);
    if (failed) {
        Py_DECREF(visits); Py_DECREF(values); Py_DECREF(priors); Py_DECREF(policy);
        return NULL;
    }
    return Py_BuildValue("(NNNiNi)", visits, values, priors, done, policy, choice.action);
}

/* label_game(state, seeds, uniforms, teacher_kind, n, fast_n, c, budget, net_jekyll,
 *            net_hyde, value_weight, fpu, playout_kind, network_moves, full_share
 *            [, gumbel_k]) ->
 * (obs, mask, target, role, value, winner, seeds used, uniforms used): a
 * self-play game of the teacher (0 ISMCTS with UCT constant c, 1 az with
 * PUCT constant c and the two networks) from the core state, as
 * label_self_play says. `seeds` (uint64) and `uniforms` (float64) are
 * bytes-like; the labels come back as the bytes of int8, bool, float32,
 * uint8 and float32 arrays, one row a kept decision. */
static PyObject *py_label_game(PyObject *self, PyObject *args) {
    PyObject *t, *nj, *nh;
    Py_buffer seeds, uniforms;
    Labeller L;
    State s; JhVariant s_variant;
    memset(&L, 0, sizeof(L));
    if (!PyArg_ParseTuple(args, "Oy*y*iiiddOOddiid|i", &t, &seeds, &uniforms, &L.kind, &L.n,
                          &L.fast_n, &L.c, &L.budget, &nj, &nh, &L.az.value_weight, &L.az.fpu,
                          &L.az.playout_kind, &L.network_moves, &L.full_share, &L.gumbel_k))
        return NULL;
    PyObject *result = NULL;
    Labels *out = NULL;
    if (jh_unpack_state(t, &s, &s_variant) < 0) goto done;
    if (L.kind != TEACHER_ISMCTS && L.kind != TEACHER_AZ) {
        PyErr_Format(PyExc_ValueError, "teacher kind must be 0 (ismcts) or 1 (az), got %d",
                     L.kind);
        goto done;
    }
    if (L.n < 1 || (L.full_share < 1.0 && L.fast_n < 1) || L.c < 0 || L.budget < 0 ||
        !(L.full_share > 0.0 && L.full_share <= 1.0)) {
        PyErr_SetString(PyExc_ValueError,
                        "label_game needs n >= 1, c >= 0, budget >= 0, 0 < full_share <= 1 "
                        "and fast_n >= 1 when full_share < 1");
        goto done;
    }
    if (L.kind == TEACHER_AZ) {
        if (!PyCapsule_IsValid(nj, "jekyll_hyde_agents._rollout.Net") ||
            !PyCapsule_IsValid(nh, "jekyll_hyde_agents._rollout.Net")) {
            PyErr_SetString(PyExc_TypeError, "an az teacher needs two networks from make_net");
            goto done;
        }
        L.az.nets[0] = get_net(nj);
        L.az.nets[1] = get_net(nh);
        L.az.c_puct = L.c;
        if (!(L.az.value_weight >= 0 && L.az.value_weight <= 1) ||
            !(L.az.fpu >= 0 && L.az.fpu <= 1)) {
            PyErr_SetString(PyExc_ValueError, "label_game needs value_weight and fpu in [0, 1]");
            goto done;
        }
        if (L.az.playout_kind != TARGET_RANDOM && L.az.playout_kind != TARGET_HEURISTIC) {
            PyErr_Format(PyExc_ValueError,
                         "label_game playout_kind must be 0 (random) or 2 (heuristic), got %d",
                         L.az.playout_kind);
            goto done;
        }
        if (L.az.value_weight > 0 && (!L.az.nets[0]->has_value || !L.az.nets[1]->has_value)) {
            PyErr_SetString(PyExc_ValueError, "value_weight > 0 needs networks with a value head");
            goto done;
        }
        if (L.gumbel_k < 0) {
            PyErr_Format(PyExc_ValueError, "label_game gumbel_k must be >= 0, got %d",
                         L.gumbel_k);
            goto done;
        }
    } else if (L.network_moves || L.full_share < 1.0 || L.gumbel_k != 0) {
        PyErr_SetString(PyExc_ValueError,
                        "network moves, fast searches and Gumbel root selection need an az "
                        "teacher (kind 1)");
        goto done;
    }
    L.seeds = seeds.buf;
    L.nseeds = seeds.len / (Py_ssize_t)sizeof(uint64_t);
    L.uniforms = uniforms.buf;
    L.nuniforms = uniforms.len / (Py_ssize_t)sizeof(double);
    if ((out = malloc(sizeof(Labels))) == NULL) { PyErr_NoMemory(); goto done; }
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = label_self_play(s, &L, out);
    Py_END_ALLOW_THREADS
    if (status < 0) {
        if (status == -1) PyErr_NoMemory();
        else if (status == -4)
            PyErr_Format(PyExc_ValueError, "the game needed more than the %zd seeds and %zd "
                         "uniforms given", L.nseeds, L.nuniforms);
        else
            PyErr_SetString(PyExc_RuntimeError, status == -2 ? "a view admitted no world"
                                                             : "a game longer than any legal one");
        goto done;
    }
    Py_ssize_t rows = out->rows;
    result = Py_BuildValue("(y#y#y#y#y#iii)", (const char *)out->obs, rows * JH_OBS_SIZE,
                           (const char *)out->mask, rows * NUM_ACTIONS,
                           (const char *)out->target, rows * NUM_ACTIONS * (Py_ssize_t)sizeof(float),
                           (const char *)out->role, rows,
                           (const char *)out->value, rows * (Py_ssize_t)sizeof(float),
                           out->winner, out->seeds_used, out->uniforms_used);
done:
    free(out);
    PyBuffer_Release(&seeds);
    PyBuffer_Release(&uniforms);
    return result;
}

static PyMethodDef methods[] = {
    {"make_net", py_make_net, METH_VARARGS,
     "make_net(layers, relu, value) -> a network for az_search (see _net.h)."},
    {"net_forward", py_net_forward, METH_VARARGS,
     "net_forward(net, observation) -> (logits, value)."},
    {"az_search", py_az_search, METH_VARARGS,
     "az_search(spec, n, seed, budget, net_jekyll, net_hyde, c_puct, value_weight, fpu"
     "[, playout_kind, gumbel_k]) -> "
     "(visits, values, priors, simulations, policy, action)."},
    {"legal_mask", py_legal_mask, METH_O, "Legal action mask of a core state."},
    {"heuristic_action", py_heuristic_action, METH_O,
     "heuristic_action(state) -> the heuristic agent's action in a core state."},
    {"apply", py_apply, METH_VARARGS, "jh_apply(state, action) -> the next core state."},
    {"rollouts", py_rollouts, METH_VARARGS,
     "rollouts(state, seed, n) -> games Hyde won among n uniformly random playouts."},
    {"determinise", py_determinise, METH_VARARGS,
     "determinise(spec, seed) -> a core state consistent with the view of the search spec."},
    {"ismcts", py_ismcts, METH_VARARGS,
     "ismcts(spec, n, c, seed, budget[, target_kind, target_net, playout_kind]) -> "
     "(visits, wins, available by action, simulations)."},
    {"view_spec", py_view_spec, METH_VARARGS,
     "view_spec(state, player) -> the search spec of the player's view of a core state."},
    {"label_game", py_label_game, METH_VARARGS,
     "label_game(state, seeds, uniforms, teacher_kind, n, fast_n, c, budget, net_jekyll, "
     "net_hyde, value_weight, fpu, playout_kind, network_moves, full_share) -> "
     "(obs, mask, target, role, value, winner, seeds used, uniforms used)."},
    {"solve_round", py_solve_round, METH_VARARGS,
     "solve_round(state, table, max_nodes) -> (values by action or None, nodes searched)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_rollout",
                                    "Fast rules core for search (see agents/rollout.py).", -1,
                                    methods};

PyMODINIT_FUNC PyInit__rollout(void) {
    jh_observe_init();
    return PyModule_Create(&module);
}

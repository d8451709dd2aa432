/*
 * Search over the rules core: information-set MCTS, network-guided search
 * (az), PIMC's round solver, and the self-play games of a search that label
 * expert iteration's data, in C.
 *
 * The rules are jekyll_hyde_env/core/jh_rules.h, the project's one C statement
 * of RULES.md, shared with the batched environment; this module adds only
 * search. jekyll_hyde_env.engine is the readable reference:
 * tests/test_rollout_core.py drives random games through the core and the
 * engine in lockstep, tests/test_ismcts_core.py holds the search to the Python
 * ISMCTS, tests/test_pimc.py holds the solver to brute-force minimax, and
 * tests/test_self_play.py holds the labelled games to train.distill's loop.
 *
 * A state crosses the boundary as the tuple of jh_pystate.h (made by
 * agents.rollout.to_core); a player's view as the search spec below (made by
 * agents.rollout.search_spec, or here from a full state by view_spec_fields).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>

#include "_heuristic.h"
#include "_net.h"
#include "jh_observe.h"
#include "jh_pystate.h"
#include "jh_rules.h"

enum { EXCHANGE = JH_EXCHANGE, DECLARE = JH_DECLARE, FOLLOW = JH_FOLLOW, SWAP = JH_SWAP,
       GAME_OVER = JH_GAME_OVER };
enum { NUM_ACTIONS = JH_NUM_ACTIONS, MAX_ROUNDS = JH_MAX_ROUNDS, TRACK_END = JH_TRACK_END };
#define POTIONS JH_POTIONS
#define ALL_CARDS JH_ALL_CARDS


/* --- information-set MCTS (SO-ISMCTS), the loop of agents/ismcts.py ---- */

/* What the searching player's view fixes, and how the rest is drawn: the
 * fields of the tuple that agents.rollout.search_spec builds. The base state
 * carries the view's public record too (cards played, given and received,
 * voids, tricks played), so a determinised world encodes to the same
 * observation as the view. */
typedef struct {
    int player;
    State base;                 /* the view's public state and the player's own side */
    uint32_t dealt, opp_known, allowed, opp_seen;
    int opp_unknown, max_potions, picking, made, required;
} Spec;
#define SPEC_FIELDS 32

static double uniform01(uint64_t *rng) { return (jh_next_random(rng) >> 11) * 0x1.0p-53; }

/* A uniformly random `size`-card subset of `pool` (partial Fisher-Yates). */
static uint32_t random_subset(uint32_t pool, int size, uint64_t *rng) {
    int ids[32], n = 0;
    for (uint32_t m = pool; m; m &= m - 1) ids[n++] = __builtin_ctz(m);
    uint32_t out = 0;
    for (int i = 0; i < size; i++) {
        int j = i + jh_below(rng, n - i);
        int t = ids[i]; ids[i] = ids[j]; ids[j] = t;
        out |= 1u << ids[i];
    }
    return out;
}

static double choose(int n, int k) {
    if (k < 0 || k > n) return 0.0;
    double r = 1.0;
    for (int i = 1; i <= k; i++) r = r * (n - k + i) / i;
    return r;
}

/* `size` cards of `allowed`, uniform among the subsets with at most
 * `max_potions` potions (information.py's _sample_opponent_cards). */
static uint32_t opponent_cards(uint32_t allowed, int size, int max_potions, uint64_t *rng) {
    uint32_t potions = allowed & POTIONS, others = allowed & ~POTIONS;
    int np = __builtin_popcount(potions), no = __builtin_popcount(others);
    if (max_potions >= (np < size ? np : size)) return random_subset(allowed, size, rng);
    double weights[5], total = 0.0;
    int first = size - no > 0 ? size - no : 0;
    for (int k = first; k <= max_potions; k++) total += weights[k] = choose(np, k) * choose(no, size - k);
    double u = uniform01(rng) * total;
    int k = first;
    while (k < max_potions && (u -= weights[k]) >= 0.0) k++;
    return random_subset(potions, k, rng) | random_subset(others, size - k, rng);
}

/* A full state consistent with the view (information.py's sample_world). */
/* Returns 0, or -1 when the view admits no world (a malformed spec). */
static int determinise(const Spec *sp, uint64_t *rng, State *w) {
    int me = sp->player, opp = 1 - me;
    *w = sp->base;
    uint32_t opp_hand = sp->opp_known | opponent_cards(sp->allowed, sp->opp_unknown, sp->max_potions, rng);
    uint32_t opp_dealt = (opp_hand | sp->opp_seen) & ~sp->dealt;
    int opp_rule = __builtin_popcount(opp_dealt & POTIONS) >= 2;
    w->hands[opp] = opp_hand;
    w->potion_rule[opp] = opp_rule;
    w->picks[opp] = 0;
    w->picks_left[opp] = 0;
    if (sp->picking) {
        int needs_potion = w->phase == EXCHANGE && opp_rule && sp->made == sp->required;
        uint32_t picks;
        int tries = 0;
        do {
            if (++tries > 10000) return -1;   /* the view admits no such picks */
            picks = random_subset(opp_hand, sp->made, rng);
        } while (needs_potion && !(picks & POTIONS));
        w->picks[opp] = picks;
        w->picks_left[opp] = sp->required - sp->made;
    }
    w->deals[w->round - 1][me] = sp->dealt;
    w->deals[w->round - 1][opp] = opp_dealt;
    for (int r = w->round; r < MAX_ROUNDS; r++) jh_deal(rng, w->deals[r]);  /* R2.1 */
    return 0;
}

/* Statistics of one action in the tree, for the player who took it; child[a]
 * is the index of action a's node (0: none, as the root is nobody's child). */
typedef struct {
    int player, visits, wins, available;
    uint32_t child_mask;
    int child[NUM_ACTIONS];
} Node;

typedef struct { Node *nodes; int count, capacity; } Tree;

static int new_node(Tree *t, int player) {
    if (t->count == t->capacity) {
        int capacity = t->capacity * 2;
        Node *grown = realloc(t->nodes, sizeof(Node) * (size_t)capacity);
        if (grown == NULL) return -1;
        t->nodes = grown; t->capacity = capacity;
    }
    Node *n = &t->nodes[t->count];
    memset(n, 0, sizeof(Node));
    n->player = player; n->available = 1;
    return t->count++;
}

static double seconds_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define MAX_DEPTH 512   /* decisions in a game: at most 76 a round */

/* The opponent's known policy, for best-response search (ISMCTS-BR): in every
 * world the opponent's decisions, in the tree and in playouts, are drawn from
 * it instead of searched. Kinds: uniformly random, the lowest legal action,
 * the heuristic agent (_heuristic.h), or a saved policy's most likely legal
 * action (its network on the opponent's observation of the world). */
enum { TARGET_NONE = -1, TARGET_RANDOM = 0, TARGET_LOWEST = 1, TARGET_HEURISTIC = 2,
       TARGET_NETWORK = 3 };
typedef struct { int seat, kind, playout_kind; const Net *net; } Target;

/* The target's move in `s` by policy `kind` (the tree's, or the playouts'). */
static int target_action(const Target *tg, int kind, const State *s, uint64_t *rng) {
    uint32_t mask = jh_legal_mask(s);
    switch (kind) {
    case TARGET_LOWEST: return __builtin_ctz(mask);
    case TARGET_HEURISTIC: return heuristic_action(s);
    case TARGET_NETWORK: {
        int8_t obs[JH_OBS_SIZE];
        float logits[NUM_ACTIONS], value;
        jh_encode(s, s->to_act, obs);
        net_forward(tg->net, obs, logits, &value);
        int best = -1;
        for (uint32_t m = mask; m; m &= m - 1) {
            int a = __builtin_ctz(m);
            if (best < 0 || logits[a] > logits[best]) best = a;
        }
        return best;
    }
    default: return jh_random_legal(mask, rng);
    }
}

static int is_target(const Target *tg, const State *s) {
    return tg->kind != TARGET_NONE && s->to_act == tg->seat;
}

/* Runs up to n simulations (fewer if `budget` seconds pass first); returns the
 * number run, -1 when memory ran out or -2 when the spec admits no world.
 * With a target (kind other than TARGET_NONE) the opponent is not searched:
 * its moves come from the target, and only the searching player's nodes
 * choose by UCT. */
static int run_ismcts(const Spec *sp, int n, double c, double budget, uint64_t rng, Tree *t,
                      const Target *tg) {
    double deadline = budget > 0 ? seconds_now() + budget : 0.0;
    if (new_node(t, -1) < 0) return -1;
    int path[MAX_DEPTH];
    int done = 0;
    for (; done < n; done++) {
        if (budget > 0 && done && (done & 31) == 0 && seconds_now() > deadline) break;
        State s;
        if (determinise(sp, &rng, &s) < 0) return -2;
        int node = 0, depth = 0;
        while (s.phase != GAME_OVER) {
            if (is_target(tg, &s)) {                    /* the opponent's known move */
                int a = target_action(tg, tg->kind, &s, &rng);
                if (!((t->nodes[node].child_mask >> a) & 1)) {
                    int child = new_node(t, s.to_act);
                    if (child < 0) return -1;
                    t->nodes[node].child[a] = child;
                    t->nodes[node].child_mask |= 1u << a;
                }
                node = t->nodes[node].child[a];
                jh_apply(&s, a);
                continue;
            }
            uint32_t mask = jh_legal_mask(&s);
            uint32_t untried = mask & ~t->nodes[node].child_mask;
            if (untried) {                              /* expand one untried action */
                int a = jh_random_legal(untried, &rng);
                int child = new_node(t, s.to_act);
                if (child < 0) return -1;
                t->nodes[node].child[a] = child;
                t->nodes[node].child_mask |= 1u << a;
                jh_apply(&s, a);
                path[depth++] = child;
                break;
            }
            int best = -1;                              /* UCT with availability counts */
            double best_score = -1.0;
            for (uint32_t m = mask; m; m &= m - 1) {
                int a = __builtin_ctz(m);
                Node *ch = &t->nodes[t->nodes[node].child[a]];
                ch->available++;
                double score = (double)ch->wins / ch->visits +
                               c * sqrt(log((double)ch->available) / ch->visits);
                if (score > best_score) { best_score = score; best = a; }
            }
            node = t->nodes[node].child[best];
            jh_apply(&s, best);
            path[depth++] = node;
        }
        while (s.phase != GAME_OVER)
            jh_apply(&s, is_target(tg, &s) ? target_action(tg, tg->playout_kind, &s, &rng)
                                           : jh_random_legal(jh_legal_mask(&s), &rng));
        for (int i = 0; i < depth; i++) {
            Node *p = &t->nodes[path[i]];
            p->visits++;
            p->wins += p->player == s.winner;
        }
    }
    return done;
}


/* --- network-guided ISMCTS (PUCT), the search of agents.az ------------- */

/* A tree node, reached by `player`'s action (-1 at the root). `value` sums
 * the outcomes of the simulations through it for `player`, as win chances in
 * [0, 1]; `prior` holds the network's policy at the node, for its children,
 * from the world in which the node was first reached. */
typedef struct {
    int player, visits;
    double value;
    float prior[NUM_ACTIONS];
    uint32_t child_mask;
    int child[NUM_ACTIONS];
} AZNode;

typedef struct { AZNode *nodes; int count, capacity; } AZTree;

static int az_new_node(AZTree *t, int player) {
    if (t->count == t->capacity) {
        int capacity = t->capacity * 2;
        AZNode *grown = realloc(t->nodes, sizeof(AZNode) * (size_t)capacity);
        if (grown == NULL) return -1;
        t->nodes = grown; t->capacity = capacity;
    }
    AZNode *n = &t->nodes[t->count];
    memset(n, 0, sizeof(AZNode));
    n->player = player;
    return t->count++;
}

typedef struct {
    const Net *nets[2];      /* the network of each role */
    double c_puct, value_weight, fpu;
    int playout_kind;        /* TARGET_RANDOM or TARGET_HEURISTIC: who plays the playouts */
} AZSettings;

/* Evaluates a state that is not over: the priors of the player to act (a
 * softmax over all 28 logits; search renormalises over the legal ones) go to
 * `prior`; returns Hyde's win chance, from the value head blended with one
 * playout (value_weight 1: the value head alone), random or by both players
 * playing the heuristic (_heuristic.h), as `playout_kind` says. */
static double az_evaluate(const AZSettings *az, const State *s, float *prior, uint64_t *rng) {
    int8_t obs[JH_OBS_SIZE];
    float logits[NUM_ACTIONS], value;
    int p = s->to_act;
    jh_encode(s, p, obs);
    net_forward(az->nets[p], obs, logits, &value);
    float top = logits[0];
    for (int a = 1; a < NUM_ACTIONS; a++) if (logits[a] > top) top = logits[a];
    float total = 0.0f;
    for (int a = 0; a < NUM_ACTIONS; a++) total += prior[a] = expf(logits[a] - top);
    if (!(total > 0.0f) || !isfinite(total)) {      /* logits that overflowed: no preference */
        for (int a = 0; a < NUM_ACTIONS; a++) prior[a] = 1.0f;
        total = NUM_ACTIONS;
    }
    for (int a = 0; a < NUM_ACTIONS; a++) prior[a] /= total;
    if (!isfinite(value)) value = 0.0f;
    double mine = 0.5 * (1.0 + value);                  /* the player to act's win chance */
    double hyde = p == 1 ? mine : 1.0 - mine;
    if (az->value_weight < 1.0) {
        State playout = *s;
        while (playout.phase != GAME_OVER)
            jh_apply(&playout, az->playout_kind == TARGET_HEURISTIC
                                   ? heuristic_action(&playout)
                                   : jh_random_legal(jh_legal_mask(&playout), rng));
        hyde = az->value_weight * hyde + (1.0 - az->value_weight) * playout.winner;
    }
    return hyde;
}

/* Runs up to n simulations (fewer if `budget` seconds pass first); returns the
 * number run, -1 when memory ran out, -2 when the spec admits no world or -3
 * when a path grew deeper than any game. */
static int run_az(const Spec *sp, const AZSettings *az, int n, double budget, uint64_t rng,
                  AZTree *t) {
    double deadline = budget > 0 ? seconds_now() + budget : 0.0;
    if (az_new_node(t, -1) < 0) return -1;
    {   /* the root's priors: the player's own view, the same in every world */
        State s;
        if (determinise(sp, &rng, &s) < 0) return -2;
        az_evaluate(az, &s, t->nodes[0].prior, &rng);
    }
    int path[MAX_DEPTH];
    int done = 0;
    for (; done < n; done++) {
        if (budget > 0 && done && (done & 15) == 0 && seconds_now() > deadline) break;
        State s;
        if (determinise(sp, &rng, &s) < 0) return -2;
        int node = 0, depth = 0;
        double hyde = -1.0;
        while (hyde < 0.0) {
            if (s.phase == GAME_OVER) { hyde = s.winner; break; }
            uint32_t mask = jh_legal_mask(&s);
            AZNode *here = &t->nodes[node];
            double prior_sum = 0.0;
            for (uint32_t m = mask; m; m &= m - 1) prior_sum += here->prior[__builtin_ctz(m)];
            double scale = az->c_puct * sqrt((double)here->visits + 1.0) /
                           (prior_sum > 0.0 ? prior_sum : 1.0);
            int best = -1;
            double best_score = -1e300;
            for (uint32_t m = mask; m; m &= m - 1) {
                int a = __builtin_ctz(m);
                double q = az->fpu, visits = 0.0;
                if ((here->child_mask >> a) & 1) {
                    const AZNode *ch = &t->nodes[here->child[a]];
                    if (ch->visits) { q = ch->value / ch->visits; visits = ch->visits; }
                }
                double score = q + scale * here->prior[a] / (1.0 + visits);
                if (score > best_score || best < 0) { best_score = score; best = a; }
            }
            int chooser = s.to_act;
            jh_apply(&s, best);
            if (!((here->child_mask >> best) & 1)) {      /* a new node: evaluate it */
                int child = az_new_node(t, chooser);
                if (child < 0) return -1;
                here = &t->nodes[node];                   /* the tree may have moved */
                here->child[best] = child;
                here->child_mask |= 1u << best;
                path[depth++] = child;
                hyde = s.phase == GAME_OVER ? s.winner
                                            : az_evaluate(az, &s, t->nodes[child].prior, &rng);
                break;
            }
            node = here->child[best];
            path[depth++] = node;
            if (depth >= MAX_DEPTH) return -3;            /* cannot happen in a legal game */
        }
        t->nodes[0].visits++;
        for (int i = 0; i < depth; i++) {
            AZNode *p = &t->nodes[path[i]];
            p->visits++;
            p->value += p->player == 1 ? hyde : 1.0 - hyde;
        }
    }
    return done;
}

/* --- perfect-information search to the end of the round (PIMC) ------ */

/* Minimax with alpha-beta and a transposition table over a fully known state,
 * to the end of the current round. Values are Hyde's chances in [0, 1]: the
 * winner of a finished game (0 or 1), or, when the round ends with the game
 * going on, the caller's table entry for the next round's start and marker.
 * Hyde maximises, Jekyll minimises. The simultaneous picks of exchange and
 * Greed swaps are searched Jekyll first (the determinised game shows Hyde
 * Jekyll's picks: the usual strategy-fusion cost of PIMC), and a player's picks
 * made inside the search are taken in increasing card order, so that each set
 * of cards is searched once. */

#define TT_BITS 20
/* One table serves every call: an entry counts only if its stamp is the
 * current call's, so no call has to clear (or allocate) 24 MB first. */
typedef struct { uint64_t key; float lo, hi; uint32_t stamp; int8_t best; } TTEntry;
static TTEntry *tt_table = NULL;
static uint32_t tt_stamp = 0;

typedef struct {
    TTEntry *tt;
    uint32_t stamp;
    long nodes, max_nodes;
    int round, aborted;
    double table[MAX_ROUNDS + 1][TRACK_END + 1];
} Search;


static uint64_t state_key(const State *s, int floor) {
    uint64_t ranks = (uint64_t)s->nranks;
    for (int i = 0; i < s->nranks; i++) ranks = ranks * 4 + (uint64_t)s->ranks[i];
    uint64_t w1 = (uint64_t)s->hands[0] | ((uint64_t)s->hands[1] << 25) |
                  ((uint64_t)s->phase << 50) | ((uint64_t)(s->to_act + 1) << 53) |
                  ((uint64_t)s->leader << 55) | ((uint64_t)(s->declared + 1) << 56);
    uint64_t w2 = (uint64_t)s->picks[0] | ((uint64_t)s->picks[1] << 25) |
                  ((uint64_t)(s->lead_card + 1) << 50) | ((uint64_t)floor << 56);
    uint64_t w3 = (uint64_t)s->tricks[0] | ((uint64_t)s->tricks[1] << 8) |
                  ((uint64_t)s->picks_left[0] << 16) | ((uint64_t)s->picks_left[1] << 20) |
                  (ranks << 24);
    return jh_mix64(w1) ^ jh_mix64(w2 + 0x9E3779B97F4A7C15ull) ^ jh_mix64(w3 + 0x632BE59BD9B4E019ull);
}

/* Moves searched at a node: the legal ones, with a player's picks taken in
 * increasing order from `floor` and only where enough cards remain above. */
static uint32_t search_moves(const State *s, int floor) {
    uint32_t mask = jh_legal_mask(s);
    if (s->phase != EXCHANGE && s->phase != SWAP) return mask;
    int p = s->to_act, left = s->picks_left[p];
    uint32_t pool = s->hands[p] & ~s->picks[p];
    uint32_t moves = 0;
    for (uint32_t m = mask & (ALL_CARDS << floor) & ALL_CARDS; m; m &= m - 1) {
        int c = __builtin_ctz(m);
        uint32_t above = pool & ~((2u << c) - 1);
        if (__builtin_popcount(above) >= left - 1) moves |= 1u << c;
    }
    return moves;
}

static double solve(Search *S, const State *s, int floor, double alpha, double beta) {
    if (s->phase == GAME_OVER) return s->winner;
    if (s->round != S->round) return S->table[s->round][s->marker];
    if (++S->nodes > S->max_nodes) { S->aborted = 1; return 0.5; }
    uint64_t key = state_key(s, floor);
    TTEntry *e = &S->tt[key & ((1u << TT_BITS) - 1)];
    int first = -1, known = e->key == key && e->stamp == S->stamp;
    if (known) {
        if (e->lo >= beta) return e->lo;
        if (e->hi <= alpha) return e->hi;
        if (e->lo == e->hi) return e->lo;
        if (e->lo > alpha) alpha = e->lo;
        if (e->hi < beta) beta = e->hi;
        first = e->best;
    }
    uint32_t moves = search_moves(s, floor);
    int maximise = s->to_act == 1, best_move = -1;
    double best = maximise ? -1.0 : 2.0, a = alpha, b = beta;
    int picking = s->phase == EXCHANGE || s->phase == SWAP;
    if (first >= 0 && !((moves >> first) & 1)) first = -1;
    for (int k = -1; k < 32; k++) {
        int m;
        if (k < 0) { if (first < 0) continue; m = first; }
        else { if (!((moves >> k) & 1) || k == first) continue; m = k; }
        State c = *s;
        jh_apply(&c, m);
        int child_floor = picking && c.phase == s->phase && c.to_act == s->to_act ? m + 1 : 0;
        double v = solve(S, &c, child_floor, a, b);
        if (S->aborted) return 0.5;
        if (maximise ? v > best : v < best) { best = v; best_move = m; }
        if (maximise) { if (best > a) a = best; }
        else if (best < b) b = best;
        if (a >= b) break;
    }
    float lo = 0.0f, hi = 1.0f;
    if (best <= alpha) hi = (float)best;
    else if (best >= beta) lo = (float)best;
    else lo = hi = (float)best;
    if (known) {                    /* keep what an earlier search proved too */
        if (e->lo > lo) lo = e->lo;
        if (e->hi < hi) hi = e->hi;
    }
    e->key = key; e->lo = lo; e->hi = hi; e->stamp = S->stamp; e->best = (int8_t)best_move;
    return best;
}


/* --- Python functions ------------------------------------------------- */

static PyObject *py_legal_mask(PyObject *self, PyObject *arg) {
    State s;
    if (jh_unpack_state(arg, &s) < 0) return NULL;
    return PyLong_FromUnsignedLong(jh_legal_mask(&s));
}

static PyObject *py_apply(PyObject *self, PyObject *args) {
    PyObject *t; int a; State s;
    if (!PyArg_ParseTuple(args, "Oi", &t, &a) || jh_unpack_state(t, &s) < 0) return NULL;
    if (jh_apply(&s, a) < 0) {
        PyErr_Format(PyExc_ValueError, "action %d is not legal in this core state", a);
        return NULL;
    }
    return jh_pack_state(&s);
}

/* heuristic_action(state) -> the C heuristic's action (agents/_heuristic.h). */
static PyObject *py_heuristic_action(PyObject *self, PyObject *arg) {
    State s;
    if (jh_unpack_state(arg, &s) < 0) return NULL;
    if (s.phase == GAME_OVER) {
        PyErr_SetString(PyExc_ValueError, "heuristic_action: the game is over");
        return NULL;
    }
    return PyLong_FromLong(heuristic_action(&s));
}

/* Plays uniformly random legal actions to the end of the game `n` times from
 * the same state; returns the number of games Hyde won. */
static PyObject *py_rollouts(PyObject *self, PyObject *args) {
    PyObject *t; unsigned long long seed; int n; State start;
    if (!PyArg_ParseTuple(args, "OKi", &t, &seed, &n) || jh_unpack_state(t, &start) < 0) return NULL;
    uint64_t rng = seed;
    int hyde_wins = 0;
    for (int i = 0; i < n; i++) {
        State s = start;
        while (s.phase != GAME_OVER) jh_apply(&s, jh_random_legal(jh_legal_mask(&s), &rng));
        hyde_wins += s.winner;
    }
    return PyLong_FromLong(hyde_wins);
}

/* Fills sp from the SPEC_FIELDS fields of a search spec; returns 0, or -1
 * when they are out of range or inconsistent (no Python error set). */
static int spec_from_fields(const long *v, Spec *sp) {
    if (v[0] != 0 && v[0] != 1) return -1;  /* the player indexes everything below */
    int me = (int)v[0], opp = 1 - me;
    State *b = &sp->base;
    memset(sp, 0, sizeof(Spec));
    sp->player = me;
    b->round = v[1]; b->marker = v[2]; b->phase = v[3]; b->to_act = v[4]; b->leader = v[5];
    b->hands[me] = v[6]; sp->dealt = v[7]; b->picks[me] = v[8]; b->picks_left[me] = v[9];
    b->potion_rule[me] = __builtin_popcount(sp->dealt & POTIONS) >= 2;
    b->lead_card = v[10]; b->declared = v[11];
    jh_unpack_ranks(b, v[12]);
    b->tricks[me] = v[13]; b->tricks[opp] = v[14]; b->winner = v[15];
    sp->opp_known = v[16]; sp->allowed = v[17]; sp->opp_unknown = v[18];
    sp->max_potions = v[19]; sp->opp_seen = v[20]; sp->made = v[21]; sp->required = v[22];
    b->played[me] = v[23]; b->played[opp] = v[24];
    b->exch_given[me] = v[25]; b->exch_given[opp] = v[26];
    b->swap_given[me] = v[27]; b->swap_given[opp] = v[28];
    b->void_colours[me] = v[29]; b->void_colours[opp] = v[30];
    b->tricks_played = v[31];
    sp->picking = b->phase == EXCHANGE || b->phase == SWAP;
    b->picks_left[opp] = sp->required - sp->made;          /* as determinise will set it */
    if (!jh_state_in_range(b)) return -1;
    uint32_t potions = sp->allowed & POTIONS;
    int np = __builtin_popcount(potions), most = sp->max_potions < np ? sp->max_potions : np;
    if ((me != 0 && me != 1) || b->round < 1 || b->round > MAX_ROUNDS || b->phase < 0 ||
        b->phase >= GAME_OVER || b->nranks > 3 || sp->max_potions < 0 || sp->max_potions > 4 ||
        sp->opp_unknown < 0 || sp->made < 0 || sp->made > sp->required ||
        (b->phase == DECLARE || b->phase == FOLLOW) != (b->lead_card >= 0) ||
        sp->opp_unknown > __builtin_popcount(sp->allowed & ~POTIONS) + most ||
        sp->made > __builtin_popcount(sp->opp_known) + sp->opp_unknown ||
        !jh_in(b->to_act, 0, 1) || !jh_in(sp->required, 0, MAX_ROUNDS) ||
        ((sp->dealt | sp->opp_known | sp->allowed | sp->opp_seen) & ~ALL_CARDS) != 0)
        return -1;
    return 0;
}

static int unpack_spec(PyObject *t, Spec *sp) {
    long v[SPEC_FIELDS];
    if (jh_read_ints(t, SPEC_FIELDS, v, "a search spec") < 0) return -1;
    if (spec_from_fields(v, sp) < 0) {
        PyErr_SetString(PyExc_ValueError, "search spec out of range or inconsistent");
        return -1;
    }
    return 0;
}

/* The fields of the search spec of player `me`'s view of the full state `s`:
 * what agents.rollout.search_spec(player_view(state, me)) gives, built from
 * the state without the view (RULES.md "What each player knows";
 * engine/information.py's player_view and hidden_cards). The opponent's known
 * cards are those `me` gave it and it still holds; it may hold any card `me`
 * cannot place outside the colours it failed to follow (T3); after an
 * exchange in which it gave no potion, at most one potion was dealt to it
 * (R2.2), less those it has shown. */
static void view_spec_fields(const State *s, int me, long *v) {
    int opp = 1 - me;
    uint32_t dealt = s->deals[s->round - 1][me];
    uint32_t opp_known = s->hands[opp] & (s->exch_given[me] | s->swap_given[me]);
    uint32_t opp_seen = s->played[opp] | s->exch_given[opp] | s->swap_given[opp];
    uint32_t allowed = ALL_CARDS ^ s->hands[me] ^ s->played[me] ^ s->played[opp] ^ opp_known;
    for (int colour = 0; colour < 3; colour++)
        if ((s->void_colours[opp] >> colour) & 1) allowed &= ~JH_COLOUR_MASK[colour];
    int max_potions = 4;
    if (s->phase != EXCHANGE && !(s->exch_given[opp] & POTIONS)) {
        int shown = __builtin_popcount(opp_seen & POTIONS & ~dealt);
        max_potions = shown < 1 ? 1 - shown : 0;
    }
    int opp_hand = __builtin_popcount(s->hands[opp]);
    int required = s->phase == EXCHANGE ? s->round
                 : s->phase == SWAP     ? (opp_hand < JH_GREED_SWAP ? opp_hand : JH_GREED_SWAP)
                                        : 0;
    const long fields[SPEC_FIELDS] = {
        me, s->round, s->marker, s->phase, s->to_act, s->leader, s->hands[me], dealt,
        s->picks[me], s->picks_left[me], s->lead_card, s->declared, jh_pack_ranks(s),
        s->tricks[me], s->tricks[opp], s->winner, opp_known, allowed,
        opp_hand - __builtin_popcount(opp_known), max_potions, opp_seen,
        required ? __builtin_popcount(s->picks[opp]) : 0, required, s->played[me],
        s->played[opp], s->exch_given[me], s->exch_given[opp], s->swap_given[me],
        s->swap_given[opp], s->void_colours[me], s->void_colours[opp], s->tricks_played};
    memcpy(v, fields, sizeof(fields));
}

/* view_spec(state, player) -> the search spec of the player's view, as a tuple. */
static PyObject *py_view_spec(PyObject *self, PyObject *args) {
    PyObject *t; int player; State s; long v[SPEC_FIELDS];
    if (!PyArg_ParseTuple(args, "Oi", &t, &player) || jh_unpack_state(t, &s) < 0) return NULL;
    if (player != 0 && player != 1) {
        PyErr_Format(PyExc_ValueError, "player must be 0 (Jekyll) or 1 (Hyde), got %d", player);
        return NULL;
    }
    view_spec_fields(&s, player, v);
    PyObject *spec = PyTuple_New(SPEC_FIELDS);
    for (int i = 0; i < SPEC_FIELDS && spec != NULL; i++) {
        PyObject *item = PyLong_FromLong(v[i]);
        if (item == NULL) { Py_CLEAR(spec); break; }
        PyTuple_SET_ITEM(spec, i, item);
    }
    return spec;
}

/* determinise(spec, seed) -> a core state drawn from the worlds the view admits. */
static PyObject *py_determinise(PyObject *self, PyObject *args) {
    PyObject *t; unsigned long long seed; Spec sp; State w;
    if (!PyArg_ParseTuple(args, "OK", &t, &seed) || unpack_spec(t, &sp) < 0) return NULL;
    uint64_t rng = seed;
    if (determinise(&sp, &rng, &w) < 0) {
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
    PyObject *t, *net = Py_None; int n; double c, budget; unsigned long long seed; Spec sp;
    Target tg = {0, TARGET_NONE, -2, NULL};
    if (!PyArg_ParseTuple(args, "OidKd|iOi", &t, &n, &c, &seed, &budget, &tg.kind, &net,
                          &tg.playout_kind) ||
        unpack_spec(t, &sp) < 0)
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
    PyObject *t, *table; long max_nodes; State s;
    if (!PyArg_ParseTuple(args, "OOl", &t, &table, &max_nodes) || jh_unpack_state(t, &s) < 0)
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
    net_free(PyCapsule_GetPointer(capsule, "agents._rollout.Net"));
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
    PyObject *capsule = PyCapsule_New(net, "agents._rollout.Net", net_capsule_free);
    if (capsule == NULL) net_free(net);
    return capsule;
fail:
    Py_DECREF(seq);
    net_free(net);
    return NULL;
}

static Net *get_net(PyObject *capsule) {
    return PyCapsule_GetPointer(capsule, "agents._rollout.Net");
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
 *           [, playout_kind]) -> (visits, values, priors, simulations):
 * network-guided ISMCTS from the view of `spec`; visits and values (summed win
 * chances of the root player) per action and the root's priors are tuples of
 * 28. playout_kind: 0 random playouts (the default), 2 heuristic ones. */
static PyObject *py_az_search(PyObject *self, PyObject *args) {
    PyObject *t, *nj, *nh;
    int n;
    unsigned long long seed;
    double budget, c_puct, value_weight, fpu;
    int playout_kind = TARGET_RANDOM;
    Spec sp;
    if (!PyArg_ParseTuple(args, "OiKdOOddd|i", &t, &n, &seed, &budget, &nj, &nh, &c_puct,
                          &value_weight, &fpu, &playout_kind) ||
        unpack_spec(t, &sp) < 0)
        return NULL;
    if (playout_kind != TARGET_RANDOM && playout_kind != TARGET_HEURISTIC) {
        PyErr_Format(PyExc_ValueError,
                     "az_search playout_kind must be 0 (random) or 2 (heuristic), got %d",
                     playout_kind);
        return NULL;
    }
    AZSettings az = {{get_net(nj), get_net(nh)}, c_puct, value_weight, fpu, playout_kind};
    if (az.nets[0] == NULL || az.nets[1] == NULL) return NULL;
    if (n < 1 || c_puct < 0 || budget < 0 || value_weight < 0 || value_weight > 1) {
        PyErr_SetString(PyExc_ValueError,
                        "az_search needs n >= 1, c_puct >= 0, budget >= 0, 0 <= value_weight <= 1");
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
    Py_BEGIN_ALLOW_THREADS
    done = run_az(&sp, &az, n, budget, seed, &tree);
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
             *priors = PyTuple_New(NUM_ACTIONS);
    if (visits == NULL || values == NULL || priors == NULL) {
        Py_XDECREF(visits); Py_XDECREF(values); Py_XDECREF(priors); free(tree.nodes);
        return NULL;
    }
    const AZNode *root = &tree.nodes[0];
    int failed = 0;
    for (int a = 0; a < NUM_ACTIONS && !failed; a++) {
        long v = 0;
        double w = 0.0;
        if ((root->child_mask >> a) & 1) {
            v = tree.nodes[root->child[a]].visits;
            w = tree.nodes[root->child[a]].value;
        }
        PyObject *items[3] = {PyLong_FromLong(v), PyFloat_FromDouble(w),
                              PyFloat_FromDouble(root->prior[a])};
        PyObject *tuples[3] = {visits, values, priors};
        for (int k = 0; k < 3; k++) {
            if (items[k] == NULL) failed = 1;
            else PyTuple_SET_ITEM(tuples[k], a, items[k]);
        }
    }
    free(tree.nodes);
    if (failed) {
        Py_DECREF(visits); Py_DECREF(values); Py_DECREF(priors);
        return NULL;
    }
    return Py_BuildValue("(NNNi)", visits, values, priors, done);
}

/* --- self-play games labelled by a search, for expert iteration --------- */

/* train.distill.label_game's loop, in C: a game of the teacher's search
 * against itself from a full state, each searched decision labelled with the
 * acting player's observation, the legal actions, the root's visit shares
 * and the search's value for the player; the same searches with the same
 * seeds, so the same games and labels (tests/test_self_play.py holds the two
 * loops to each other). */
enum { TEACHER_ISMCTS = 0, TEACHER_AZ = 1 };

typedef struct {
    int kind, n, fast_n, network_moves;  /* fast_n: simulations of a search not kept */
    double c, budget, full_share;        /* c: UCT's constant (ISMCTS) */
    AZSettings az;                       /* TEACHER_AZ: the search's networks and PUCT */
    const uint64_t *seeds;               /* one a search, in order */
    Py_ssize_t nseeds;
    const double *uniforms;              /* one a decision with a choice, when full_share < 1 */
    Py_ssize_t nuniforms;
} Labeller;

typedef struct {
    int8_t obs[MAX_DEPTH][JH_OBS_SIZE];
    uint8_t mask[MAX_DEPTH][NUM_ACTIONS];
    float target[MAX_DEPTH][NUM_ACTIONS];
    uint8_t role[MAX_DEPTH];
    float value[MAX_DEPTH];
    int rows, winner, seeds_used, uniforms_used;
} Labels;

typedef struct { Tree ismcts; AZTree az; } Trees;

/* One search of the teacher from `sp`: the root's visit counts, the summed
 * outcomes of the root player's simulations (`wins`) and, for az, the root's
 * priors. Returns 0, or run_ismcts's or run_az's error code. */
static int teacher_search(const Labeller *L, Trees *trees, const Spec *sp, int n, uint64_t seed,
                          float visits[NUM_ACTIONS], double *wins, float priors[NUM_ACTIONS]) {
    *wins = 0.0;
    if (L->kind == TEACHER_AZ) {
        trees->az.count = 0;
        int done = run_az(sp, &L->az, n, L->budget, seed, &trees->az);
        if (done < 0) return done;
        const AZNode *root = &trees->az.nodes[0];
        for (int a = 0; a < NUM_ACTIONS; a++) {
            const AZNode *child = (root->child_mask >> a) & 1 ? &trees->az.nodes[root->child[a]]
                                                              : NULL;
            visits[a] = child ? (float)child->visits : 0.0f;
            *wins += child ? child->value : 0.0;
            priors[a] = root->prior[a];
        }
        return 0;
    }
    Target none = {0, TARGET_NONE, TARGET_NONE, NULL};
    trees->ismcts.count = 0;
    int done = run_ismcts(sp, n, L->c, L->budget, seed, &trees->ismcts, &none);
    if (done < 0) return done;
    const Node *root = &trees->ismcts.nodes[0];
    for (int a = 0; a < NUM_ACTIONS; a++) {
        const Node *child = root->child[a] ? &trees->ismcts.nodes[root->child[a]] : NULL;
        visits[a] = child ? (float)child->visits : 0.0f;
        *wins += child ? child->wins : 0;
        priors[a] = 0.0f;
    }
    return 0;
}

/* The legal action of `legal` with the highest key, the lowest one on ties. */
static int highest_legal(uint32_t legal, const float *key) {
    int best = -1;
    for (uint32_t m = legal; m; m &= m - 1) {
        int a = __builtin_ctz(m);
        if (best < 0 || key[a] > key[best]) best = a;
    }
    return best;
}

/* Plays the game from `s` to its end, labelling into `out`. Returns 0, a
 * search's error code (-1 memory, -2 a view without worlds), -3 for a game
 * longer than any legal one or -4 when the seeds or uniforms ran out. */
static int label_self_play(State s, const Labeller *L, Labels *out) {
    Trees trees = {{NULL, 0, 4096}, {NULL, 0, 4096}};   /* the teacher's kind's, grown as needed */
    int status;
    if (L->kind == TEACHER_AZ) status = (trees.az.nodes = malloc(sizeof(AZNode) * 4096)) ? 0 : -1;
    else status = (trees.ismcts.nodes = malloc(sizeof(Node) * 4096)) ? 0 : -1;
    out->rows = out->seeds_used = out->uniforms_used = 0;
    for (int step = 0; status == 0 && s.phase != GAME_OVER; step++) {
        if (step >= MAX_DEPTH) { status = -3; break; }
        uint32_t legal = jh_legal_mask(&s);
        int player = s.to_act, action = __builtin_ctz(legal);
        if (legal & (legal - 1)) {                      /* a choice: search it */
            int kept = 1;
            if (L->full_share < 1.0) {
                if (out->uniforms_used >= L->nuniforms) { status = -4; break; }
                kept = L->uniforms[out->uniforms_used++] < L->full_share;
            }
            if (out->seeds_used >= L->nseeds) { status = -4; break; }
            long fields[SPEC_FIELDS];
            Spec sp;
            view_spec_fields(&s, player, fields);
            if (spec_from_fields(fields, &sp) < 0) { status = -2; break; }
            float visits[NUM_ACTIONS], priors[NUM_ACTIONS];
            double wins;
            status = teacher_search(L, &trees, &sp, kept ? L->n : L->fast_n,
                                    L->seeds[out->seeds_used++], visits, &wins, priors);
            if (status < 0) break;
            if (kept) {
                int row = out->rows++;
                float total = 0.0f;
                for (int a = 0; a < NUM_ACTIONS; a++) total += visits[a];
                jh_encode(&s, player, out->obs[row]);
                for (int a = 0; a < NUM_ACTIONS; a++) {
                    out->mask[row][a] = (legal >> a) & 1;
                    out->target[row][a] = visits[a] / total;
                }
                out->role[row] = (uint8_t)player;
                out->value[row] = (float)(2.0 * wins / (total > 1.0f ? total : 1.0f) - 1.0);
            }
            action = highest_legal(legal, L->network_moves ? priors : visits);
        }
        jh_apply(&s, action);
    }
    out->winner = s.winner;
    free(trees.ismcts.nodes);
    free(trees.az.nodes);
    return status;
}

/* label_game(state, seeds, uniforms, teacher_kind, n, fast_n, c, budget, net_jekyll,
 *            net_hyde, value_weight, fpu, playout_kind, network_moves, full_share) ->
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
    State s;
    memset(&L, 0, sizeof(L));
    if (!PyArg_ParseTuple(args, "Oy*y*iiiddOOddiid", &t, &seeds, &uniforms, &L.kind, &L.n,
                          &L.fast_n, &L.c, &L.budget, &nj, &nh, &L.az.value_weight, &L.az.fpu,
                          &L.az.playout_kind, &L.network_moves, &L.full_share))
        return NULL;
    PyObject *result = NULL;
    Labels *out = NULL;
    if (jh_unpack_state(t, &s) < 0) goto done;
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
        if (!PyCapsule_IsValid(nj, "agents._rollout.Net") ||
            !PyCapsule_IsValid(nh, "agents._rollout.Net")) {
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
    } else if (L.network_moves || L.full_share < 1.0) {
        PyErr_SetString(PyExc_ValueError,
                        "network moves and fast searches need an az teacher (kind 1)");
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
     "[, playout_kind]) -> "
     "(visits, values, priors, simulations)."},
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

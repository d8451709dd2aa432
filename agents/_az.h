/*
 * Network-guided ISMCTS (PUCT), the search of jekyll_hyde_agents.az: a network's priors
 * and values guide the tree. tests/test_az.py holds it to its Python reference.
 */
#ifndef AGENTS_AZ_H
#define AGENTS_AZ_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_ismcts.h"
#include "_net.h"
#include "_search.h"
#include "jh_information.h"
#include "jh_observe.h"
#include "jh_rules.h"

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

/* One simulation: draws a world from `sp`, walks the tree by PUCT (the root's
 * action forced to `forced` when it is not -1), adds and evaluates one node and
 * backs the outcome up. Returns 0, -1 when memory ran out, -2 when the spec
 * admits no world or -3 when a path grew deeper than any game. */
static int az_simulate(const JhSpec *sp, const AZSettings *az, AZTree *t, uint64_t *rng,
                       int forced) {
    int path[MAX_DEPTH];
    State s;
    if (jh_determinise(sp, rng, &s) < 0) return -2;
    int node = 0, depth = 0;
    double hyde = -1.0;
    while (hyde < 0.0) {
        if (s.phase == GAME_OVER) { hyde = s.winner; break; }
        uint32_t mask = jh_legal_mask(&s);
        AZNode *here = &t->nodes[node];
        int best = -1;
        if (node == 0 && forced >= 0 && ((mask >> forced) & 1)) {   /* Gumbel's root */
            best = forced;
        } else {
            double prior_sum = 0.0;
            for (uint32_t m = mask; m; m &= m - 1) prior_sum += here->prior[__builtin_ctz(m)];
            double scale = az->c_puct * sqrt((double)here->visits + 1.0) /
                           (prior_sum > 0.0 ? prior_sum : 1.0);
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
                                        : az_evaluate(az, &s, t->nodes[child].prior, rng);
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
    return 0;
}

/* Adds the root to an empty tree with its priors (the player's own view, the
 * same in every world); gives the legal actions there and the root's value for
 * the player to act (value head and playout blended as az_evaluate does).
 * Returns 0 or -1 (memory), -2 (no world). */
static int az_root(const JhSpec *sp, const AZSettings *az, AZTree *t, uint64_t *rng,
                   uint32_t *legal, double *value) {
    if (az_new_node(t, -1) < 0) return -1;
    State s;
    if (jh_determinise(sp, rng, &s) < 0) return -2;
    double hyde = az_evaluate(az, &s, t->nodes[0].prior, rng);
    *legal = jh_legal_mask(&s);
    *value = s.to_act == 1 ? hyde : 1.0 - hyde;
    return 0;
}

/* Runs up to n simulations (fewer if `budget` seconds pass first); returns the
 * number run, -1 when memory ran out, -2 when the spec admits no world or -3
 * when a path grew deeper than any game. */
static int run_az(const JhSpec *sp, const AZSettings *az, int n, double budget, uint64_t rng,
                  AZTree *t) {
    double deadline = budget > 0 ? seconds_now() + budget : 0.0;
    int status;
    uint32_t legal;
    double value;
    if ((status = az_root(sp, az, t, &rng, &legal, &value)) < 0) return status;
    int done = 0;
    for (; done < n; done++) {
        if (budget > 0 && done && (done & 15) == 0 && seconds_now() > deadline) break;
        if ((status = az_simulate(sp, az, t, &rng, -1)) < 0) return status;
    }
    return done;
}

/* Gumbel root selection (Danihelka et al., "Policy improvement by planning with
 * Gumbel", 2022): the root draws Gumbel noise g(a) for its legal actions, keeps
 * the k with the highest g(a) + log pi(a) and shares the simulations among them
 * by sequential halving, each round halving the candidates by
 * g(a) + log pi(a) + sigma(q(a)); the tree below the root is PUCT's. The move is
 * the best of the most visited candidates left (the last one standing when the
 * budget covers every round); the policy target is softmax(log pi + sigma(q)),
 * q completed for unvisited actions by the value mix v_mix and then rescaled to
 * [0, 1] over the legal actions (min to 0, max to 1), as mctx does: sigma(q) =
 * (GUMBEL_C_VISIT + the most visits of an action) * GUMBEL_C_SCALE * q. */
#define GUMBEL_C_VISIT 50.0
#define GUMBEL_C_SCALE 0.1

typedef struct {
    int action;                  /* the search's move */
    float policy[NUM_ACTIONS];   /* the improved policy over the legal actions, 0 elsewhere */
} AZChoice;

static double gumbel_sigma(double q, int max_visits) {
    return (GUMBEL_C_VISIT + max_visits) * GUMBEL_C_SCALE * q;
}

/* The root's completed Q of every action for the root player: an action's mean
 * value when it was visited, else v_mix (the root's own value mixed with the
 * prior-weighted mean of the visited actions' values), rescaled over the legal
 * actions to [0, 1]. Gives the most visits of an action. */
static int gumbel_completed_q(const AZTree *t, uint32_t legal, const double *pi, double value,
                              double q[NUM_ACTIONS]) {
    const AZNode *root = &t->nodes[0];
    int visits[NUM_ACTIONS] = {0}, total = 0, most = 0;
    double weighted = 0.0, weight = 0.0;
    for (uint32_t m = legal; m; m &= m - 1) {
        int a = __builtin_ctz(m);
        if ((root->child_mask >> a) & 1) visits[a] = t->nodes[root->child[a]].visits;
        if (visits[a] > 0) {
            q[a] = t->nodes[root->child[a]].value / visits[a];
            weighted += pi[a] * q[a];
            weight += pi[a];
            total += visits[a];
            if (visits[a] > most) most = visits[a];
        }
    }
    double mix = weight > 0.0 ? (value + total * weighted / weight) / (1.0 + total) : value;
    double low = 1e300, high = -1e300;
    for (uint32_t m = legal; m; m &= m - 1) {
        int a = __builtin_ctz(m);
        if (visits[a] == 0) q[a] = mix;
        if (q[a] < low) low = q[a];
        if (q[a] > high) high = q[a];
    }
    double span = high - low > 1e-8 ? high - low : 1e-8;   /* rescaled to [0, 1] */
    for (uint32_t m = legal; m; m &= m - 1) {
        int a = __builtin_ctz(m);
        q[a] = (q[a] - low) / span;
    }
    return most;
}

/* Sorts candidate[0..count) by key, highest first; equal keys keep their order. */
static void sort_by_key(int *candidate, int count, const double *key) {
    for (int i = 1; i < count; i++)
        for (int j = i; j > 0 && key[candidate[j]] > key[candidate[j - 1]]; j--) {
            int swap = candidate[j]; candidate[j] = candidate[j - 1]; candidate[j - 1] = swap;
        }
}

/* g(a) + log pi(a) + sigma(q(a)) of every legal action: what sequential halving keeps. */
static void gumbel_keys(uint32_t legal, const double *noisy_logits, const double *q, int most,
                        double *key) {
    for (uint32_t m = legal; m; m &= m - 1) {
        int a = __builtin_ctz(m);
        key[a] = noisy_logits[a] + gumbel_sigma(q[a], most);
    }
}

/* Gumbel root selection with up to n simulations (fewer if `budget` seconds pass)
 * among at most k sampled root actions; the move and the improved policy go to
 * `choice`. Returns the simulations run or run_az's error codes. */
static int run_az_gumbel(const JhSpec *sp, const AZSettings *az, int n, int k, double budget,
                         uint64_t rng, AZTree *t, AZChoice *choice) {
    double deadline = budget > 0 ? seconds_now() + budget : 0.0;
    int status;
    uint32_t legal;
    double value;
    if ((status = az_root(sp, az, t, &rng, &legal, &value)) < 0) return status;
    if (legal == 0) return -2;                        /* a finished game: nothing to choose */
    double logits[NUM_ACTIONS] = {0}, pi[NUM_ACTIONS] = {0}, noisy[NUM_ACTIONS] = {0};
    double q[NUM_ACTIONS] = {0}, key[NUM_ACTIONS] = {0}, pi_sum = 0.0;
    for (uint32_t m = legal; m; m &= m - 1) pi_sum += t->nodes[0].prior[__builtin_ctz(m)];
    int candidate[NUM_ACTIONS] = {0}, count = 0;
    for (uint32_t m = legal; m; m &= m - 1) {
        int a = __builtin_ctz(m);
        pi[a] = pi_sum > 0.0 ? t->nodes[0].prior[a] / pi_sum : 1.0 / __builtin_popcount(legal);
        logits[a] = log(pi[a] > 1e-30 ? pi[a] : 1e-30);
        double u = jh_uniform01(&rng);
        noisy[a] = logits[a] - log(-log(u > 1e-300 ? u : 1e-300));   /* g(a) + log pi(a) */
        candidate[count++] = a;
    }
    sort_by_key(candidate, count, noisy);             /* the k best by g + logits first */
    int remaining = count < k ? count : k;
    int done = 0, out_of_time = 0;
    while (done < n && !out_of_time) {
        int rounds = 1;
        while ((1 << rounds) < remaining) rounds++;
        int each = (n - done) / (rounds * remaining);
        if (each < 1) each = 1;
        for (int i = 0; i < remaining && done < n && !out_of_time; i++)
            for (int j = 0; j < each && done < n; j++, done++) {
                if (budget > 0 && done && (done & 15) == 0 && seconds_now() > deadline) {
                    out_of_time = 1;
                    break;
                }
                if ((status = az_simulate(sp, az, t, &rng, candidate[i])) < 0) return status;
            }
        if (remaining == 1 || out_of_time) continue;   /* a cut round halves nothing */
        gumbel_keys(legal, noisy, q, gumbel_completed_q(t, legal, pi, value, q), key);
        sort_by_key(candidate, remaining, key);
        remaining = (remaining + 1) / 2;
    }
    int most = gumbel_completed_q(t, legal, pi, value, q);
    gumbel_keys(legal, noisy, q, most, key);
    int best = -1;                 /* among the most visited candidates left, as mctx does */
    int best_visits = -1;
    for (int i = 0; i < remaining; i++) {
        int a = candidate[i], n_a = 0;
        if ((t->nodes[0].child_mask >> a) & 1) n_a = t->nodes[t->nodes[0].child[a]].visits;
        if (n_a > best_visits || (n_a == best_visits && key[a] > key[best])) {
            best = a;
            best_visits = n_a;
        }
    }
    choice->action = best;
    double top = -1e300, total = 0.0, score[NUM_ACTIONS];
    for (uint32_t m = legal; m; m &= m - 1) {
        int a = __builtin_ctz(m);
        score[a] = logits[a] + gumbel_sigma(q[a], most);
        if (score[a] > top) top = score[a];
    }
    for (int a = 0; a < NUM_ACTIONS; a++) choice->policy[a] = 0.0f;
    for (uint32_t m = legal; m; m &= m - 1) total += exp(score[__builtin_ctz(m)] - top);
    for (uint32_t m = legal; m; m &= m - 1) {
        int a = __builtin_ctz(m);
        choice->policy[a] = (float)(exp(score[a] - top) / total);
    }
    return done;
}

#endif /* AGENTS_AZ_H */

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

/* Runs up to n simulations (fewer if `budget` seconds pass first); returns the
 * number run, -1 when memory ran out, -2 when the spec admits no world or -3
 * when a path grew deeper than any game. */
static int run_az(const JhSpec *sp, const AZSettings *az, int n, double budget, uint64_t rng,
                  AZTree *t) {
    double deadline = budget > 0 ? seconds_now() + budget : 0.0;
    if (az_new_node(t, -1) < 0) return -1;
    {   /* the root's priors: the player's own view, the same in every world */
        State s;
        if (jh_determinise(sp, &rng, &s) < 0) return -2;
        az_evaluate(az, &s, t->nodes[0].prior, &rng);
    }
    int path[MAX_DEPTH];
    int done = 0;
    for (; done < n; done++) {
        if (budget > 0 && done && (done & 15) == 0 && seconds_now() > deadline) break;
        State s;
        if (jh_determinise(sp, &rng, &s) < 0) return -2;
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

#endif /* AGENTS_AZ_H */

/*
 * Information-set MCTS (SO-ISMCTS) over the rules core, the loop of
 * agents/ismcts.py, with best-response targets (ISMCTS-BR).
 * tests/test_ismcts_core.py holds it to the Python search.
 */
#ifndef AGENTS_ISMCTS_H
#define AGENTS_ISMCTS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_heuristic.h"
#include "_net.h"
#include "_search.h"
#include "jh_information.h"
#include "jh_observe.h"
#include "jh_rules.h"

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
static int run_ismcts(const JhSpec *sp, int n, double c, double budget, uint64_t rng, Tree *t,
                      const Target *tg) {
    double deadline = budget > 0 ? seconds_now() + budget : 0.0;
    if (new_node(t, -1) < 0) return -1;
    int path[MAX_DEPTH];
    int done = 0;
    for (; done < n; done++) {
        if (budget > 0 && done && (done & 31) == 0 && seconds_now() > deadline) break;
        State s;
        if (jh_determinise(sp, &rng, &s) < 0) return -2;
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

#endif /* AGENTS_ISMCTS_H */

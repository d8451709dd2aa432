/*
 * Self-play games labelled by a search, for expert iteration: the loop of
 * jekyll_hyde_train.distill.label_game in C. tests/test_self_play.py holds the two loops
 * to each other.
 */
#ifndef AGENTS_LABEL_H
#define AGENTS_LABEL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_az.h"
#include "_ismcts.h"
#include "_search.h"
#include "jh_information.h"
#include "jh_observe.h"
#include "jh_rules.h"

/* jekyll_hyde_train.distill.label_game's loop, in C: a game of the teacher's search
 * against itself from a full state, each searched decision labelled with the
 * acting player's observation, the legal actions, the search's policy target
 * (the root's visit shares, or Gumbel's improved policy) and the search's value
 * for the player; the same searches with the same
 * seeds, so the same games and labels (tests/test_self_play.py holds the two
 * loops to each other). */
enum { TEACHER_ISMCTS = 0, TEACHER_AZ = 1 };

typedef struct {
    int kind, n, fast_n, network_moves;  /* fast_n: simulations of a search not kept */
    int gumbel_k;                        /* az: 0 PUCT at the root, else Gumbel (run_az_gumbel) */
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
 * outcomes of the root player's simulations (`wins`), for az the root's priors
 * and, with Gumbel root selection, the search's move and improved policy in
 * `choice` (else choice->action is -1). Returns 0, or run_ismcts's, run_az's or
 * run_az_gumbel's error code. */
static int teacher_search(const Labeller *L, Trees *trees, const JhSpec *sp, int n, uint64_t seed,
                          float visits[NUM_ACTIONS], double *wins, float priors[NUM_ACTIONS],
                          AZChoice *choice) {
    *wins = 0.0;
    choice->action = -1;
    if (L->kind == TEACHER_AZ) {
        trees->az.count = 0;
        int done = L->gumbel_k > 0
                       ? run_az_gumbel(sp, &L->az, n, L->gumbel_k, L->budget, seed, &trees->az,
                                       choice)
                       : run_az(sp, &L->az, n, L->budget, seed, &trees->az);
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
            long fields[JH_SPEC_FIELDS];
            JhSpec sp;
            jh_view_spec_fields(&s, player, fields);
            if (jh_spec_from_fields(fields, &sp, s.variant) < 0) { status = -2; break; }
            float visits[NUM_ACTIONS], priors[NUM_ACTIONS];
            double wins;
            AZChoice choice;
            status = teacher_search(L, &trees, &sp, kept ? L->n : L->fast_n,
                                    L->seeds[out->seeds_used++], visits, &wins, priors, &choice);
            if (status < 0) break;
            if (kept) {
                int row = out->rows++;
                float total = 0.0f;
                for (int a = 0; a < NUM_ACTIONS; a++) total += visits[a];
                jh_encode(&s, player, out->obs[row]);
                for (int a = 0; a < NUM_ACTIONS; a++) {
                    out->mask[row][a] = (legal >> a) & 1;
                    out->target[row][a] = choice.action >= 0 ? choice.policy[a] : visits[a] / total;
                }
                out->role[row] = (uint8_t)player;
                out->value[row] = (float)(2.0 * wins / (total > 1.0f ? total : 1.0f) - 1.0);
            }
            action = L->network_moves    ? highest_legal(legal, priors)
                     : choice.action >= 0 ? choice.action
                                          : highest_legal(legal, visits);
        }
        jh_apply(&s, action);
    }
    out->winner = s.winner;
    free(trees.ismcts.nodes);
    free(trees.az.nodes);
    return status;
}

#endif /* AGENTS_LABEL_H */

/*
 * Perfect-information search to the end of the round, the solver of PIMC
 * (agents/pimc.py). tests/test_pimc.py holds it to brute-force minimax.
 */
#ifndef AGENTS_PIMC_H
#define AGENTS_PIMC_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_search.h"
#include "jh_rules.h"

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

#endif /* AGENTS_PIMC_H */

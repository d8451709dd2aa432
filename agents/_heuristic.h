/*
 * The heuristic agent (agents/heuristic.py) in C, for search that models it:
 * the best-response search of agents/best_response.py plays the heuristic's
 * moves inside its tree and playouts. agents/heuristic.py is the reference
 * and states the reasoning; this is the same function of the acting player's
 * view, read from a State (the acting player's hand, the public ranks, trick
 * counts, led card and the opponent's shown voids). tests/test_best_response.py
 * holds it to the Python agent decision by decision. Ties are broken as
 * Python's max/min over the ascending legal actions do: the first best wins.
 */
#ifndef JH_HEURISTIC_H
#define JH_HEURISTIC_H

#include <stdlib.h>

#include "jh_rules.h"

/* How likely a led card is to win the trick (T4, T5): colour rank, then value. */
static inline double heur_lead_strength(const State *s, int card) {
    if (card >= JH_FIRST_POTION) return 7 + jh_strength2(card) / 2.0;
    int rank = jh_rank_index(s, jh_colour_of(card));
    if (rank < 0) rank = 1;                                   /* unranked: the middle */
    return 7 * rank + card % 7 + 1;
}

static inline int heur_wants_to_win(const State *s) {
    int p = s->to_act, mine = s->tricks[p], theirs = s->tricks[1 - p];
    if (p == 1) {                                             /* Hyde */
        if (mine != theirs) return mine > theirs;
        uint32_t hand = s->hands[p];
        int n = jh_popcount(hand);
        double total = 0;
        for (uint32_t m = hand; m; m &= m - 1) total += heur_lead_strength(s, __builtin_ctz(m));
        return total / (n > 1 ? n : 1) >= 9;
    }
    return mine != theirs && mine < theirs;                   /* Jekyll */
}

/* (mine, theirs) after answering the current lead with `card`, Pride included (T6a). */
static inline void heur_trick_outcome(const State *s, int card, int *mine, int *theirs) {
    State after = *s;
    jh_rank_colour(&after, card);                             /* T4 before comparing */
    int p = s->to_act, i_win = !jh_leader_wins(&after, s->lead_card, card);
    int pride = jh_trick_effect(s->lead_card, card) == JH_EFFECT_PRIDE;
    *mine = s->tricks[p]; *theirs = s->tricks[1 - p];
    if (i_win) {
        (*mine)++;
        if (pride && *theirs > 0) { (*mine)++; (*theirs)--; }
    } else {
        (*theirs)++;
        if (pride && *mine > 0) { (*mine)--; (*theirs)++; }
    }
}

static inline int heur_follow(const State *s, uint32_t legal) {
    int hyde = s->to_act == 1, plan_wins = heur_wants_to_win(s), best = -1;
    int best_value = 0;
    double best_spare = 0;
    for (uint32_t m = legal; m; m &= m - 1) {
        int card = __builtin_ctz(m), mine, theirs;
        heur_trick_outcome(s, card, &mine, &theirs);
        int gap = mine - theirs;
        int value = hyde ? (plan_wins ? gap : -gap) : -abs(gap);
        double strength = heur_lead_strength(s, card);
        int won = mine > s->tricks[s->to_act];
        double spare = (won || plan_wins) ? -strength : strength;
        if (best < 0 || value > best_value || (value == best_value && spare > best_spare)) {
            best = card; best_value = value; best_spare = spare;
        }
    }
    return best;
}

static inline int heur_lead(const State *s, uint32_t legal) {
    int win = heur_wants_to_win(s), best = -1;
    uint32_t pool = legal;
    if (!win && (legal & ~JH_POTIONS)) pool = legal & ~JH_POTIONS;   /* keep potions */
    double best_strength = 0;
    for (uint32_t m = pool; m; m &= m - 1) {
        int card = __builtin_ctz(m);
        double strength = heur_lead_strength(s, card);
        if (best < 0 || (win ? strength > best_strength : strength < best_strength)) {
            best = card; best_strength = strength;
        }
    }
    return best;
}

static inline int heur_declare(const State *s, uint32_t legal) {
    int p = s->to_act, held[3], colour = 0;
    for (int c = 0; c < 3; c++) held[c] = jh_popcount(s->hands[p] & JH_COLOUR_MASK[c]);
    if (heur_wants_to_win(s)) {
        uint32_t void_colours = s->void_colours[1 - p];
        if (void_colours) {
            colour = __builtin_ctz(void_colours);
        } else {
            for (int c = 1; c < 3; c++) if (held[c] > held[colour]) colour = c;
        }
    } else {
        for (int c = 1; c < 3; c++) if (held[c] < held[colour]) colour = c;
    }
    int action = JH_DECLARE_BASE + colour;
    return (legal >> action) & 1 ? action : __builtin_ctz(legal);
}

/* Exchange and swap: Hyde gives the middle values, Jekyll potions and its highest cards. */
static inline int heur_give(const State *s, uint32_t legal) {
    int best = -1, best_key = 0;
    for (uint32_t m = legal; m; m &= m - 1) {
        int card = __builtin_ctz(m), key;
        if (s->to_act == 1) {
            key = card < JH_FIRST_POTION ? abs(card % 7 + 1 - 4) : 9;
            if (best < 0 || key < best_key) { best = card; best_key = key; }
        } else {
            key = card >= JH_FIRST_POTION ? 100 : card % 7;
            if (best < 0 || key >= best_key) { best = card; best_key = key; }
        }
    }
    return best;
}

/* The heuristic's action for the player to act in `s` (not over). */
static inline int heuristic_action(const State *s) {
    uint32_t legal = jh_legal_mask(s);
    if (jh_popcount(legal) == 1) return __builtin_ctz(legal);
    switch (s->phase) {
    case JH_FOLLOW: return heur_follow(s, legal);
    case JH_LEAD: return heur_lead(s, legal);
    case JH_DECLARE: return heur_declare(s, legal);
    default: return heur_give(s, legal);
    }
}

#endif /* JH_HEURISTIC_H */

/*
 * What each player knows (RULES.md "What each player knows"), in C: the part
 * of a state a player's view fixes, and the worlds consistent with it.
 *
 * jekyll_hyde_env.engine.information is the readable reference: player_view
 * and hidden_cards there, jh_view_spec_fields here; sample_world there,
 * jh_determinise here. The observation encoder (jh_observe.h) and every search
 * (agents/_rollout.c and the headers it includes) take a player's knowledge
 * from this header. tests/test_rollout_core.py and tests/test_ismcts_core.py
 * hold it to the engine.
 */
#ifndef JH_INFORMATION_H
#define JH_INFORMATION_H

#include <stdint.h>
#include <string.h>

#include "jh_rules.h"

/* The opponent's cards that `me` knows: those `me` gave it (exchange, Greed
 * swaps) and it still holds. */
static inline uint32_t jh_opponent_known(const State *s, int me) {
    int opp = 1 - me;
    return s->hands[opp] & (s->exch_given[me] | s->swap_given[me]);
}

/* What the searching player's view fixes, and how the rest is drawn: the
 * fields of the tuple that jekyll_hyde_agents.rollout.search_spec builds. The base state
 * carries the view's public record too (cards played, given and received,
 * voids, tricks played), so a determinised world encodes to the same
 * observation as the view. */
typedef struct {
    int player;
    State base;                 /* the view's public state and the player's own side */
    uint32_t dealt, opp_known, allowed, opp_seen;
    int opp_unknown, max_potions, picking, made, required;
} JhSpec;
#define JH_SPEC_FIELDS 32

static inline double jh_uniform01(uint64_t *rng) { return (jh_next_random(rng) >> 11) * 0x1.0p-53; }

/* A uniformly random `size`-card subset of `pool` (partial Fisher-Yates). */
static inline uint32_t jh_random_subset(uint32_t pool, int size, uint64_t *rng) {
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

static inline double jh_choose(int n, int k) {
    if (k < 0 || k > n) return 0.0;
    double r = 1.0;
    for (int i = 1; i <= k; i++) r = r * (n - k + i) / i;
    return r;
}

/* `size` cards of `allowed`, uniform among the subsets with at most
 * `max_potions` potions (information.py's _sample_opponent_cards). */
static inline uint32_t jh_opponent_cards(uint32_t allowed, int size, int max_potions, uint64_t *rng) {
    uint32_t potions = allowed & JH_POTIONS, others = allowed & ~JH_POTIONS;
    int np = __builtin_popcount(potions), no = __builtin_popcount(others);
    if (max_potions >= (np < size ? np : size)) return jh_random_subset(allowed, size, rng);
    double weights[5], total = 0.0;
    int first = size - no > 0 ? size - no : 0;
    for (int k = first; k <= max_potions; k++) total += weights[k] = jh_choose(np, k) * jh_choose(no, size - k);
    double u = jh_uniform01(rng) * total;
    int k = first;
    while (k < max_potions && (u -= weights[k]) >= 0.0) k++;
    return jh_random_subset(potions, k, rng) | jh_random_subset(others, size - k, rng);
}

/* A full state consistent with the view (information.py's sample_world). */
/* Returns 0, or -1 when the view admits no world (a malformed spec). */
static inline int jh_determinise(const JhSpec *sp, uint64_t *rng, State *w) {
    int me = sp->player, opp = 1 - me;
    *w = sp->base;
    uint32_t opp_hand = sp->opp_known | jh_opponent_cards(sp->allowed, sp->opp_unknown, sp->max_potions, rng);
    uint32_t opp_dealt = (opp_hand | sp->opp_seen) & ~sp->dealt;
    int opp_rule = __builtin_popcount(opp_dealt & JH_POTIONS) >= 2;
    w->hands[opp] = opp_hand;
    w->potion_rule[opp] = opp_rule;
    w->picks[opp] = 0;
    w->picks_left[opp] = 0;
    if (sp->picking) {
        int needs_potion = w->phase == JH_EXCHANGE && opp_rule && sp->made == sp->required;
        uint32_t picks;
        int tries = 0;
        do {
            if (++tries > 10000) return -1;   /* the view admits no such picks */
            picks = jh_random_subset(opp_hand, sp->made, rng);
        } while (needs_potion && !(picks & JH_POTIONS));
        w->picks[opp] = picks;
        w->picks_left[opp] = sp->required - sp->made;
    }
    w->deals[w->round - 1][me] = sp->dealt;
    w->deals[w->round - 1][opp] = opp_dealt;
    const JhVariant *variant = jh_variant(w);
    for (int r = w->round; r < variant->rounds; r++)                    /* R2.1, V2, V3 */
        jh_deal_in(rng, w->deals[r], variant);
    return 0;
}

/* Fills sp from the JH_SPEC_FIELDS fields of a search spec of a game of `variant`
 * (NULL: the full game; it must outlive sp); returns 0, or -1 when they are out of
 * range or inconsistent (no Python error set). */
static inline int jh_spec_from_fields(const long *v, JhSpec *sp, const JhVariant *variant) {
    if (v[0] != 0 && v[0] != 1) return -1;  /* the player indexes everything below */
    int me = (int)v[0], opp = 1 - me;
    State *b = &sp->base;
    memset(sp, 0, sizeof(JhSpec));
    b->variant = variant;
    sp->player = me;
    b->round = v[1]; b->marker = v[2]; b->phase = v[3]; b->to_act = v[4]; b->leader = v[5];
    b->hands[me] = v[6]; sp->dealt = v[7]; b->picks[me] = v[8]; b->picks_left[me] = v[9];
    b->potion_rule[me] = __builtin_popcount(sp->dealt & JH_POTIONS) >= 2;
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
    sp->picking = b->phase == JH_EXCHANGE || b->phase == JH_SWAP;
    b->picks_left[opp] = sp->required - sp->made;          /* as determinise will set it */
    if (!jh_state_in_range(b)) return -1;
    uint32_t potions = sp->allowed & JH_POTIONS;
    int np = __builtin_popcount(potions), most = sp->max_potions < np ? sp->max_potions : np;
    const JhVariant *game = jh_variant(b);
    if ((me != 0 && me != 1) || b->round < 1 || b->round > game->rounds || b->phase < 0 ||
        b->phase >= JH_GAME_OVER || b->nranks > 3 || sp->max_potions < 0 || sp->max_potions > 4 ||
        sp->opp_unknown < 0 || sp->made < 0 || sp->made > sp->required ||
        (b->phase == JH_DECLARE || b->phase == JH_FOLLOW) != (b->lead_card >= 0) ||
        sp->opp_unknown > __builtin_popcount(sp->allowed & ~JH_POTIONS) + most ||
        sp->made > __builtin_popcount(sp->opp_known) + sp->opp_unknown ||
        !jh_in(b->to_act, 0, 1) || !jh_in(sp->required, 0, JH_MAX_ROUNDS) ||
        ((sp->dealt | sp->opp_known | sp->allowed | sp->opp_seen) & ~game->deck) != 0)
        return -1;
    return 0;
}

/* The fields of the search spec of player `me`'s view of the full state `s`:
 * what jekyll_hyde_agents.rollout.search_spec(player_view(state, me)) gives, built from
 * the state without the view (RULES.md "What each player knows";
 * engine/information.py's player_view and hidden_cards). The opponent's known
 * cards are those `me` gave it and it still holds; it may hold any card `me`
 * cannot place outside the colours it failed to follow (T3); after an
 * exchange in which it gave no potion, at most one potion was dealt to it
 * (R2.2), less those it has shown. */
static inline void jh_view_spec_fields(const State *s, int me, long *v) {
    int opp = 1 - me;
    uint32_t dealt = s->deals[s->round - 1][me];
    uint32_t opp_known = jh_opponent_known(s, me);
    uint32_t opp_seen = s->played[opp] | s->exch_given[opp] | s->swap_given[opp];
    const JhVariant *variant = jh_variant(s);
    uint32_t allowed = variant->deck ^ s->hands[me] ^ s->played[me] ^ s->played[opp] ^ opp_known;
    for (int colour = 0; colour < 3; colour++)
        if ((s->void_colours[opp] >> colour) & 1) allowed &= ~JH_COLOUR_MASK[colour];
    int max_potions = 4;
    if (s->phase != JH_EXCHANGE && !(s->exch_given[opp] & JH_POTIONS)) {
        int shown = __builtin_popcount(opp_seen & JH_POTIONS & ~dealt);
        max_potions = shown < 1 ? 1 - shown : 0;
    }
    int opp_hand = __builtin_popcount(s->hands[opp]);
    int required = s->phase == JH_EXCHANGE ? variant->exchange[s->round - 1]
                 : s->phase == JH_SWAP     ? (opp_hand < JH_GREED_SWAP ? opp_hand : JH_GREED_SWAP)
                                        : 0;
    const long fields[JH_SPEC_FIELDS] = {
        me, s->round, s->marker, s->phase, s->to_act, s->leader, s->hands[me], dealt,
        s->picks[me], s->picks_left[me], s->lead_card, s->declared, jh_pack_ranks(s),
        s->tricks[me], s->tricks[opp], s->winner, opp_known, allowed,
        opp_hand - __builtin_popcount(opp_known), max_potions, opp_seen,
        required ? __builtin_popcount(s->picks[opp]) : 0, required, s->played[me],
        s->played[opp], s->exch_given[me], s->exch_given[opp], s->swap_given[me],
        s->swap_given[opp], s->void_colours[me], s->void_colours[opp], s->tricks_played};
    memcpy(v, fields, sizeof(fields));
}

#endif /* JH_INFORMATION_H */

/*
 * The observation encoder and action mask in C, over the State of jh_rules.h.
 *
 * Writes exactly the int8 vector that jekyll_hyde_env.observation.encode
 * builds from engine.information.player_view: the pieces of that module's
 * LAYOUT, in order. JH_LAYOUT below lists the same names and sizes;
 * core._core.layout() exposes it and tests/test_batched.py checks it against
 * the Python LAYOUT, and compares whole observations byte for byte.
 */
#ifndef JH_OBSERVE_H
#define JH_OBSERVE_H

#include <stdint.h>
#include <string.h>

#include "jh_information.h"
#include "jh_rules.h"

typedef struct { const char *name; int size; } JhPiece;

/* The pieces in order (names and sizes of observation.LAYOUT). */
static const JhPiece JH_LAYOUT[] = {
    {"hand", 25}, {"my_picks", 25}, {"played_by_me", 25}, {"played_by_opponent", 25},
    {"exchange_given", 25}, {"exchange_received", 25}, {"swap_given", 25},
    {"swap_received", 25}, {"opponent_known", 25}, {"trick_lead", 25},
    {"declared_colour", 3}, {"opponent_void", 3}, {"my_void", 3}, {"colour_ranks", 9},
    {"my_tricks", 11}, {"opponent_tricks", 11}, {"marker", 11}, {"round", 3},
    {"my_role", 2}, {"phase", 5}, {"my_turn", 1}, {"i_led", 1}, {"picks_left", 4},
    {"tricks_played", 10},
};
#define JH_LAYOUT_PIECES ((int)(sizeof(JH_LAYOUT) / sizeof(JH_LAYOUT[0])))

/* Offsets of the pieces, in the order above. */
enum {
    JH_O_HAND = 0, JH_O_PICKS = 25, JH_O_PLAYED = 50, JH_O_OPP_PLAYED = 75,
    JH_O_EXCH_GIVEN = 100, JH_O_EXCH_RECEIVED = 125, JH_O_SWAP_GIVEN = 150,
    JH_O_SWAP_RECEIVED = 175, JH_O_OPP_KNOWN = 200, JH_O_LEAD = 225,
    JH_O_DECLARED = 250, JH_O_OPP_VOID = 253, JH_O_MY_VOID = 256, JH_O_RANKS = 259,
    JH_O_MY_TRICKS = 268, JH_O_OPP_TRICKS = 279, JH_O_MARKER = 290, JH_O_ROUND = 301,
    JH_O_ROLE = 304, JH_O_PHASE = 306, JH_O_MY_TURN = 311, JH_O_I_LED = 312,
    JH_O_PICKS_LEFT = 313, JH_O_TRICKS_PLAYED = 317, JH_OBS_SIZE = 327
};

/* JH_BYTES_OF[b]: the 8 bits of b as 8 bytes of 0/1, bit 0 first (little-endian). */
static uint64_t JH_BYTES_OF[256];

static inline void jh_observe_init(void) {
    for (int b = 0; b < 256; b++) {
        uint64_t v = 0;
        for (int i = 0; i < 8; i++) v |= (uint64_t)((b >> i) & 1) << (8 * i);
        JH_BYTES_OF[b] = v;
    }
}

/* A 25-bit card mask as 25 bytes of 0/1 at `out`. */
static inline void jh_write_cards(int8_t *out, uint32_t mask) {
    memcpy(out, &JH_BYTES_OF[mask & 0xFF], 8);
    memcpy(out + 8, &JH_BYTES_OF[(mask >> 8) & 0xFF], 8);
    memcpy(out + 16, &JH_BYTES_OF[(mask >> 16) & 0xFF], 8);
    out[24] = (int8_t)((mask >> 24) & 1);
}

static inline void jh_write_bits3(int8_t *out, uint32_t bits) {
    out[0] = (int8_t)(bits & 1); out[1] = (int8_t)((bits >> 1) & 1);
    out[2] = (int8_t)((bits >> 2) & 1);
}

/* `player`'s information state (RULES.md "What each player knows") as the
 * JH_OBS_SIZE int8 entries of the observation. The opponent's hand appears
 * only as the cards the player gave it and it still holds; its pending picks
 * not at all. */
static inline void jh_encode(const State *s, int player, int8_t *out) {
    int opp = 1 - player;
    jh_write_cards(out + JH_O_HAND, s->hands[player]);
    jh_write_cards(out + JH_O_PICKS, s->picks[player]);
    jh_write_cards(out + JH_O_PLAYED, s->played[player]);
    jh_write_cards(out + JH_O_OPP_PLAYED, s->played[opp]);
    jh_write_cards(out + JH_O_EXCH_GIVEN, s->exch_given[player]);
    jh_write_cards(out + JH_O_EXCH_RECEIVED, s->exch_given[opp]);
    jh_write_cards(out + JH_O_SWAP_GIVEN, s->swap_given[player]);
    jh_write_cards(out + JH_O_SWAP_RECEIVED, s->swap_given[opp]);
    jh_write_cards(out + JH_O_OPP_KNOWN, jh_opponent_known(s, player));
    jh_write_cards(out + JH_O_LEAD, s->lead_card >= 0 ? 1u << s->lead_card : 0u);
    memset(out + JH_O_DECLARED, 0, JH_OBS_SIZE - JH_O_DECLARED);
    if (s->declared >= 0) out[JH_O_DECLARED + s->declared] = 1;
    jh_write_bits3(out + JH_O_OPP_VOID, s->void_colours[opp]);
    jh_write_bits3(out + JH_O_MY_VOID, s->void_colours[player]);
    for (int rank = 0; rank < s->nranks; rank++)
        out[JH_O_RANKS + 3 * s->ranks[rank] + rank] = 1;
    out[JH_O_MY_TRICKS + s->tricks[player]] = 1;
    out[JH_O_OPP_TRICKS + s->tricks[opp]] = 1;
    out[JH_O_MARKER + s->marker] = 1;
    out[JH_O_ROUND + s->round - 1] = 1;
    out[JH_O_ROLE + player] = 1;
    if (s->phase < JH_GAME_OVER) {
        out[JH_O_PHASE + s->phase] = 1;
        out[JH_O_TRICKS_PLAYED + s->tricks_played] = 1;
    }
    out[JH_O_MY_TURN] = (int8_t)(s->to_act == player);
    out[JH_O_I_LED] = (int8_t)(s->lead_card >= 0 && s->leader == player);
    out[JH_O_PICKS_LEFT + s->picks_left[player]] = 1;
}

/* The 28-entry int8 action mask of `player`: all zeros unless `player` is to act. */
static inline void jh_write_mask(const State *s, int player, int8_t *out) {
    uint32_t m = s->to_act == player ? jh_legal_mask(s) : 0;
    memcpy(out, &JH_BYTES_OF[m & 0xFF], 8);
    memcpy(out + 8, &JH_BYTES_OF[(m >> 8) & 0xFF], 8);
    memcpy(out + 16, &JH_BYTES_OF[(m >> 16) & 0xFF], 8);
    out[24] = (int8_t)((m >> 24) & 1);
    out[25] = (int8_t)((m >> 25) & 1);
    out[26] = (int8_t)((m >> 26) & 1);
    out[27] = (int8_t)((m >> 27) & 1);
}

#endif /* JH_OBSERVE_H */

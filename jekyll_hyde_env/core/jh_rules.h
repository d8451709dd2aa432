/*
 * The rules of Jekyll vs Hyde in C: the project's one C statement of RULES.md.
 *
 * jekyll_hyde_env.engine (Python) is the readable reference; this header states
 * the same rules (R2-R4, T1-T7) over 25-bit card masks so that the batched
 * environment (core/_core.c) and every search (agents/_rollout.c) run
 * millions of decisions per second. Both include this header, so there is
 * one C statement of the rules, not one per user. tests/test_rollout_core.py
 * and tests/test_batched.py hold it to the engine step by step.
 *
 * Everything here is `static inline` and allocation-free: a State is plain
 * data, copied by assignment. Card ids, colour ids and action ids are those
 * of RULES.md ("Components and encodings"); phases are engine.cards.Phase.
 */
#ifndef JH_RULES_H
#define JH_RULES_H

#include <stdint.h>
#include <string.h>

enum { JH_EXCHANGE = 0, JH_LEAD = 1, JH_DECLARE = 2, JH_FOLLOW = 3, JH_SWAP = 4,
       JH_GAME_OVER = 5 };
enum { JH_NUM_CARDS = 25, JH_NUM_COLOURS = 3, JH_FIRST_POTION = 21, JH_DECLARE_BASE = 25,
       JH_NUM_ACTIONS = 28, JH_HAND_SIZE = 10, JH_TRACK_END = 10, JH_HYDE_LEADS_FROM = 5,
       JH_MAX_ROUNDS = 3, JH_GREED_SWAP = 2 };
enum { JH_EFFECT_NONE = 0, JH_EFFECT_PRIDE = 1, JH_EFFECT_WRATH = 2, JH_EFFECT_GREED = 3 };

#define JH_POTIONS (0xFu << JH_FIRST_POTION)
#define JH_ALL_CARDS ((1u << JH_NUM_CARDS) - 1)
#define JH_DECLARE_MASK (7u << JH_DECLARE_BASE)
static const uint32_t JH_COLOUR_MASK[3] = {0x7Fu, 0x7Fu << 7, 0x7Fu << 14};

/* A variant (RULES.md V1-V7; engine/variant.py): the cards in play and the counts.
 * JH_FULL is the game of RULES.md. `exchange[r]` is how many cards each player gives
 * in round r+1 (V4); `ids` are the deck's card ids, ascending (its first `deck_size`
 * entries). Only the start and the end of a round, the deal and the lead read it, so
 * the rules of a trick run as fast in every variant. */
typedef struct {
    uint32_t deck;
    int deck_size, hand_size, rounds, track_end, hyde_leads_from;
    int exchange[3];
    int ids[JH_NUM_CARDS];
} JhVariant;

#define JH_VARIANT_FIELDS 8  /* deck, hand_size, rounds, exchange x 3, track_end, lead */

static const JhVariant JH_FULL = {
    JH_ALL_CARDS, JH_NUM_CARDS, JH_HAND_SIZE, JH_MAX_ROUNDS, JH_TRACK_END, JH_HYDE_LEADS_FROM,
    {1, 2, 3},
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24}};

static inline int jh_in(long v, long lo, long hi) { return lo <= v && v <= hi; }

/* The JH_VARIANT_FIELDS numbers of `v`, in the order jh_variant_from_fields reads them. */
static inline void jh_variant_fields(const JhVariant *v, long *f) {
    f[0] = (long)v->deck; f[1] = v->hand_size; f[2] = v->rounds;
    for (int r = 0; r < 3; r++) f[3 + r] = v->exchange[r];
    f[6] = v->track_end; f[7] = v->hyde_leads_from;
}

/* Fills `v` from the JH_VARIANT_FIELDS numbers of engine.variant.Variant.core_fields();
 * returns 0, or -1 when they are out of the ranges RULES.md V1-V6 allow. */
static inline int jh_variant_from_fields(const long *f, JhVariant *v) {
    uint32_t deck = (uint32_t)f[0];
    if (f[0] < 0 || (f[0] & ~(long)JH_ALL_CARDS) != 0) return -1;
    v->deck = deck;
    v->deck_size = 0;
    for (int c = 0; c < JH_NUM_CARDS; c++)
        if ((deck >> c) & 1) v->ids[v->deck_size++] = c;
    v->hand_size = (int)f[1]; v->rounds = (int)f[2];
    for (int r = 0; r < 3; r++) v->exchange[r] = (int)f[3 + r];
    v->track_end = (int)f[6]; v->hyde_leads_from = (int)f[7];
    if (!jh_in(v->hand_size, 1, JH_HAND_SIZE) || 2 * v->hand_size > v->deck_size ||
        !jh_in(v->rounds, 1, JH_MAX_ROUNDS) || !jh_in(v->track_end, 1, JH_TRACK_END) ||
        !jh_in(v->hyde_leads_from, 0, v->track_end))
        return -1;
    for (int r = 0; r < 3; r++)
        if (!jh_in(v->exchange[r], 0, v->hand_size < 3 ? v->hand_size : 3)) return -1;
    return 0;
}

/* Complete state of one game; per-player arrays are indexed 0 Jekyll, 1 Hyde.
 * `deals[r]` are round r+1's dealt hands (all three drawn at the start, so
 * applying an action needs no randomness). `ranks[0..nranks)` are the ranked
 * colours, weakest first (T4). `played`, `exch_given`, `swap_given` and
 * `void` are this round's public record that the observation shows: cards
 * played, given in the exchange (R2.2) and in Greed swaps (T6b), and colours
 * a player failed to follow (T3). `tricks_played` counts this round's
 * finished tricks. `winner` is -1 until the game is over. */
typedef struct {
    int round, marker, phase, to_act, leader;
    uint32_t hands[2], picks[2];
    int picks_left[2], potion_rule[2];
    int lead_card, declared;
    int nranks, ranks[3];
    int tricks[2];
    uint32_t deals[3][2];
    int winner;
    uint32_t played[2], exch_given[2], swap_given[2], void_colours[2];
    int tricks_played;
    const JhVariant *variant;  /* NULL: the full game (JH_FULL) */
} State;

static inline const JhVariant *jh_variant(const State *s) {
    return s->variant ? s->variant : &JH_FULL;
}

static inline void jh_hand_over_picks(State *s);

static inline int jh_popcount(uint32_t m) { return __builtin_popcount(m); }
static inline int jh_colour_of(int card) { return card < JH_FIRST_POTION ? card / 7 : -1; }

/* T5b: doubled strength; a potion counts its number plus one half. */
static inline int jh_strength2(int card) {
    return card < JH_FIRST_POTION ? 2 * (card % 7 + 1) : 2 * (card - JH_FIRST_POTION + 2) + 1;
}

/* R2.1/R2.2: deal round `s->round`'s hands and open the exchange, ranks cleared; a
 * round whose exchange gives no card (V4) opens at its first trick. */
static inline void jh_start_round(State *s) {
    int given = jh_variant(s)->exchange[s->round - 1];
    uint32_t j = s->deals[s->round - 1][0], h = s->deals[s->round - 1][1];
    s->hands[0] = j; s->hands[1] = h;
    s->potion_rule[0] = jh_popcount(j & JH_POTIONS) >= 2;
    s->potion_rule[1] = jh_popcount(h & JH_POTIONS) >= 2;
    s->picks[0] = s->picks[1] = 0;
    s->picks_left[0] = s->picks_left[1] = given;
    s->phase = JH_EXCHANGE; s->to_act = 0; s->leader = 0;
    s->lead_card = -1; s->declared = -1;
    s->nranks = 0;
    s->tricks[0] = s->tricks[1] = 0;
    s->played[0] = s->played[1] = 0;
    s->exch_given[0] = s->exch_given[1] = 0;
    s->swap_given[0] = s->swap_given[1] = 0;
    s->void_colours[0] = s->void_colours[1] = 0;
    s->tricks_played = 0;
    if (given == 0) jh_hand_over_picks(s);
}

/* A new game of `variant` (NULL: the full game) at round 1's exchange from three
 * rounds of (Jekyll, Hyde) hands (those of rounds the variant does not play are 0). */
static inline void jh_new_game_in(State *s, const uint32_t deals[3][2], const JhVariant *variant) {
    for (int r = 0; r < JH_MAX_ROUNDS; r++) {
        s->deals[r][0] = deals[r][0]; s->deals[r][1] = deals[r][1];
    }
    s->variant = variant;
    s->round = 1; s->marker = 0; s->winner = -1;
    jh_start_round(s);
}

/* A new game of the full game. */
static inline void jh_new_game(State *s, const uint32_t deals[3][2]) {
    jh_new_game_in(s, deals, NULL);
}

/* Bit a is set when action a is legal for the player to act (0 once over).
 * T1 lead any card; T2 declare any colour; T3a/T3b follow; exchange and swap
 * pick a card not chosen yet, and under the potion rule (R2.2) the last
 * exchange pick must be a potion when none was chosen before. */
static inline uint32_t jh_legal_mask(const State *s) {
    int p = s->to_act;
    switch (s->phase) {
    case JH_FOLLOW: {
        uint32_t hand = s->hands[p];
        if (s->lead_card >= JH_FIRST_POTION) {                 /* T3b */
            uint32_t same = hand & JH_COLOUR_MASK[s->declared];
            return same ? same : hand;
        }
        uint32_t colour = JH_COLOUR_MASK[jh_colour_of(s->lead_card)];  /* T3a */
        return (hand & colour) ? hand & (colour | JH_POTIONS) : hand;
    }
    case JH_LEAD: return s->hands[p];                          /* T1 */
    case JH_DECLARE: return JH_DECLARE_MASK;                   /* T2 */
    case JH_GAME_OVER: return 0;
    default: {                                                 /* R2.2 exchange, T6b swap */
        uint32_t m = s->hands[p] & ~s->picks[p];
        if (s->phase == JH_EXCHANGE && s->potion_rule[p] && s->picks_left[p] == 1 &&
            !(s->picks[p] & JH_POTIONS))
            m &= JH_POTIONS;
        return m;
    }
    }
}

/* T4: a colour card ranks its colour if not ranked yet; the second colour
 * ranked also ranks the third, as the strongest. */
static inline void jh_rank_colour(State *s, int card) {
    if (card >= JH_FIRST_POTION) return;
    int c = jh_colour_of(card);
    for (int i = 0; i < s->nranks; i++) if (s->ranks[i] == c) return;
    s->ranks[s->nranks++] = c;
    if (s->nranks == 2) s->ranks[s->nranks++] = 3 - s->ranks[0] - s->ranks[1];
}

static inline int jh_rank_index(const State *s, int colour) {
    for (int i = 0; i < s->nranks; i++) if (s->ranks[i] == colour) return i;
    return -1;
}

/* T3: a follower who does not follow shows the lack of the colour asked.
 * After a potion lead (T3b) any card not of the declared colour shows it;
 * after a colour lead (T3a) a potion is allowed, so only another colour does. */
static inline void jh_note_void(State *s, int player, int card) {
    if (s->lead_card >= JH_FIRST_POTION) {
        if (card >= JH_FIRST_POTION || jh_colour_of(card) != s->declared)
            s->void_colours[player] |= 1u << s->declared;
    } else if (card < JH_FIRST_POTION) {
        int asked = jh_colour_of(s->lead_card);
        if (jh_colour_of(card) != asked) s->void_colours[player] |= 1u << asked;
    }
}

/* R2.4: move the marker by the trick difference; end the game or deal again. */
static inline void jh_end_round(State *s) {
    const JhVariant *v = jh_variant(s);
    int diff = s->tricks[0] - s->tricks[1];
    s->marker += diff < 0 ? -diff : diff;
    if (s->marker > v->track_end) s->marker = v->track_end;                 /* V5 */
    if (s->marker >= v->track_end || s->round == v->rounds) {               /* V3 */
        s->winner = s->marker >= v->track_end ? 1 : 0;
        s->phase = JH_GAME_OVER; s->to_act = -1;
    } else {
        s->round++;
        jh_start_round(s);
    }
}

/* T5: whether the led card beats the follower's, with both cards' colours
 * already ranked (T4) in `s`. */
static inline int jh_leader_wins(const State *s, int lead, int follow) {
    if (lead >= JH_FIRST_POTION || follow >= JH_FIRST_POTION)          /* T5b, T5c */
        return jh_strength2(lead) > jh_strength2(follow);
    if (jh_colour_of(lead) == jh_colour_of(follow)) return lead > follow;  /* T5a */
    return jh_rank_index(s, jh_colour_of(lead)) > jh_rank_index(s, jh_colour_of(follow));
}

/* T6: the potion effect of a trick, JH_EFFECT_NONE unless exactly one card is a potion. */
static inline int jh_trick_effect(int lead, int follow) {
    if ((lead >= JH_FIRST_POTION) == (follow >= JH_FIRST_POTION)) return JH_EFFECT_NONE;
    return 1 + jh_colour_of(lead >= JH_FIRST_POTION ? follow : lead);
}

/* T5 winner, T6 effect, T7 next leader; ends the round after the tenth trick. */
static inline void jh_finish_trick(State *s, int follow) {
    int leader = s->leader, lead = s->lead_card;
    int winner = jh_leader_wins(s, lead, follow) ? leader : 1 - leader, loser = 1 - winner;
    s->tricks[winner]++;
    s->tricks_played++;
    int effect = jh_trick_effect(lead, follow);
    if (effect == JH_EFFECT_PRIDE) {                                   /* T6a */
        if (s->tricks[loser] > 0) { s->tricks[loser]--; s->tricks[winner]++; }
    } else if (effect == JH_EFFECT_WRATH) {                            /* T6c */
        s->nranks = 0;
    }
    s->lead_card = -1; s->declared = -1; s->leader = winner;
    int hand_size = jh_popcount(s->hands[0]);
    if (hand_size == 0) {
        jh_end_round(s);
    } else if (effect == JH_EFFECT_GREED) {                            /* T6b */
        int n = hand_size < JH_GREED_SWAP ? hand_size : JH_GREED_SWAP;
        s->phase = JH_SWAP; s->picks_left[0] = s->picks_left[1] = n; s->to_act = 0;
    } else {
        s->phase = JH_LEAD; s->to_act = winner;                        /* T7 */
    }
}

/* Exchange (R2.2) or Greed swap (T6b): the chosen cards change hands together. */
static inline void jh_hand_over_picks(State *s) {
    uint32_t j = s->picks[0], h = s->picks[1];
    s->hands[0] = (s->hands[0] ^ j) | h;
    s->hands[1] = (s->hands[1] ^ h) | j;
    s->picks[0] = s->picks[1] = 0;
    if (s->phase == JH_EXCHANGE) {
        s->exch_given[0] = j; s->exch_given[1] = h;
        s->leader = s->marker < jh_variant(s)->hyde_leads_from ? 0 : 1;  /* R3, V6 */
    } else {
        s->swap_given[0] |= j; s->swap_given[1] |= h;
    }
    s->phase = JH_LEAD; s->to_act = s->leader;
}

/* Applies action `a` for the player to act; returns 0, or -1 (and changes
 * nothing) when it is not legal. */
static inline int jh_apply(State *s, int a) {
    if (a < 0 || a >= JH_NUM_ACTIONS || !((jh_legal_mask(s) >> a) & 1)) return -1;
    int p = s->to_act;
    uint32_t bit = 1u << a;
    switch (s->phase) {
    case JH_LEAD:
        s->hands[p] ^= bit; s->played[p] |= bit; s->lead_card = a; s->leader = p;
        if (a >= JH_FIRST_POTION) { s->phase = JH_DECLARE; }
        else { jh_rank_colour(s, a); s->phase = JH_FOLLOW; s->to_act = 1 - p; }
        break;
    case JH_FOLLOW:
        s->hands[p] ^= bit; s->played[p] |= bit;
        jh_note_void(s, p, a);
        jh_rank_colour(s, a);
        jh_finish_trick(s, a);
        break;
    case JH_DECLARE:
        s->declared = a - JH_DECLARE_BASE; s->phase = JH_FOLLOW; s->to_act = 1 - p;
        break;
    default:
        s->picks[p] |= bit;
        if (--s->picks_left[p] == 0) {
            if (p == 0) s->to_act = 1; else jh_hand_over_picks(s);
        }
    }
    return 0;
}

/* --- randomness: splitmix64, small, fast and well mixed ------------------ */

static inline uint64_t jh_mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline uint64_t jh_next_random(uint64_t *x) {
    return jh_mix64(*x += 0x9E3779B97F4A7C15ull);
}

/* A uniform integer in [0, n), 1 <= n < 2^31: the top 32 random bits scaled
 * by n (a multiplication, where a remainder would need a slow division; the
 * bias is below n / 2^32). */
static inline int jh_below(uint64_t *rng, int n) {
    return (int)(((jh_next_random(rng) >> 32) * (uint64_t)n) >> 32);
}

/* A uniformly random set bit of a non-empty mask. */
static inline int jh_random_legal(uint32_t mask, uint64_t *rng) {
    int k = jh_below(rng, jh_popcount(mask));
    while (k--) mask &= mask - 1;
    return __builtin_ctz(mask);
}

/* R2.1 (V2): shuffle the cards in play; a hand to Jekyll, a hand to Hyde, the rest set
 * aside (in the full game 10, 10 and 5 of the 25 cards). */
static inline void jh_deal_in(uint64_t *rng, uint32_t hands[2], const JhVariant *v) {
    int cards[JH_NUM_CARDS], n = v->deck_size, size = v->hand_size;
    memcpy(cards, v->ids, sizeof(int) * (size_t)n);
    for (int p = 0, i = 0; p < 2; p++) {  /* the first hand to Jekyll, the next to Hyde */
        uint32_t hand = 0;
        for (int end = i + size; i < end; i++) {
            int j = i + jh_below(rng, n - i);
            int t = cards[i]; cards[i] = cards[j]; cards[j] = t;
            hand |= 1u << cards[i];
        }
        hands[p] = hand;
    }
}

static inline void jh_deal(uint64_t *rng, uint32_t hands[2]) { jh_deal_in(rng, hands, &JH_FULL); }

/* Colour ranks packed into one int: count * 64 + r0 + 4 * r1 + 16 * r2, weakest
 * first (the form of a state's ranks in a tuple and in a search spec). */
static inline long jh_pack_ranks(const State *s) {
    long r = (long)s->nranks << 6;
    for (int i = 0; i < s->nranks; i++) r |= (long)s->ranks[i] << (2 * i);
    return r;
}

static inline void jh_unpack_ranks(State *s, long r) {
    s->nranks = (int)(r >> 6);
    for (int i = 0; i < 3; i++) s->ranks[i] = (int)((r >> (2 * i)) & 3);
}

/* Every field within the range the rules give it: the C code indexes arrays with
 * them (the observation's one-hot pieces, the players), so a tuple from Python
 * is checked before any use. */
static inline int jh_state_in_range(const State *s) {
    uint32_t masks = s->hands[0] | s->hands[1] | s->picks[0] | s->picks[1] | s->played[0] |
                     s->played[1] | s->exch_given[0] | s->exch_given[1] | s->swap_given[0] |
                     s->swap_given[1];
    const JhVariant *v = jh_variant(s);
    for (int r = 0; r < JH_MAX_ROUNDS; r++) masks |= s->deals[r][0] | s->deals[r][1];
    int over = s->phase == JH_GAME_OVER;
    int ok = jh_in(s->round, 1, v->rounds) && jh_in(s->phase, 0, JH_GAME_OVER) &&
             jh_in(s->marker, 0, v->track_end) && (masks & ~v->deck) == 0 &&
             (over ? s->to_act == -1 : jh_in(s->to_act, 0, 1)) && jh_in(s->leader, 0, 1) &&
             jh_in(s->lead_card, -1, JH_NUM_CARDS - 1) && jh_in(s->declared, -1, 2) &&
             jh_in(s->nranks, 0, 3) && jh_in(s->winner, -1, 1) &&
             jh_in(s->tricks_played, 0, over ? v->hand_size : v->hand_size - 1) &&
             (s->void_colours[0] | s->void_colours[1]) < 8;
    for (int p = 0; p < 2 && ok; p++)
        ok = jh_in(s->picks_left[p], 0, JH_MAX_ROUNDS) && jh_in(s->tricks[p], 0, v->hand_size) &&
             jh_in(s->potion_rule[p], 0, 1);
    for (int i = 0; i < s->nranks && ok; i++) ok = jh_in(s->ranks[i], 0, 2);
    return ok;
}

#endif /* JH_RULES_H */

/*
 * Fast rules core for search: the rules of RULES.md over card masks, in C.
 *
 * jekyll_hyde_env.engine is the source of truth; this core re-states the same
 * rules (R2-R4, T1-T7) so that ISMCTS can play thousands of random games per
 * second and PIMC can solve determinised rounds. tests/test_rollout_core.py
 * drives random games through both in lockstep and compares legal masks and
 * states after every action; tests/test_pimc.py holds the solver to brute-force
 * minimax on the engine.
 *
 * A state crosses the boundary as a tuple of ints (see agents/rollout.py,
 * which packs and unpacks it): round, marker, phase, to_act, leader, hand0,
 * hand1, picks0, picks1, picks_left0, picks_left1, potion_rule0, potion_rule1,
 * lead_card, declared, ranks (packed), tricks0, tricks1, the six deal masks,
 * winner. Packed ranks: count * 64 + r0 + 4 * r1 + 16 * r2, weakest first.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>

enum { EXCHANGE = 0, LEAD = 1, DECLARE = 2, FOLLOW = 3, SWAP = 4, GAME_OVER = 5 };
enum { FIRST_POTION = 21, DECLARE_BASE = 25, NUM_ACTIONS = 28, TRACK_END = 10 };
enum { HYDE_LEADS_FROM = 5, MAX_ROUNDS = 3, GREED_SWAP = 2 };
enum { E_NONE = 0, E_PRIDE = 1, E_WRATH = 2, E_GREED = 3 };
#define POTIONS (0xFu << FIRST_POTION)
#define ALL_CARDS ((1u << 25) - 1)
#define DECLARE_MASK (7u << DECLARE_BASE)
static const uint32_t COLOUR_MASK[3] = {0x7Fu, 0x7Fu << 7, 0x7Fu << 14};
#define NFIELDS 25

typedef struct {
    int round, marker, phase, to_act, leader;
    uint32_t hands[2], picks[2];
    int picks_left[2], potion_rule[2];
    int lead_card, declared;
    int nranks, ranks[3];
    int tricks[2];
    uint32_t deals[3][2];
    int winner;
} State;

static int colour_of(int card) { return card < FIRST_POTION ? card / 7 : -1; }
/* T5b: doubled strength; a potion counts its number plus one half. */
static int strength2(int card) {
    return card < FIRST_POTION ? 2 * (card % 7 + 1) : 2 * (card - FIRST_POTION + 2) + 1;
}

static void start_round(State *s) {
    uint32_t j = s->deals[s->round - 1][0], h = s->deals[s->round - 1][1];
    s->hands[0] = j; s->hands[1] = h;
    s->potion_rule[0] = __builtin_popcount(j & POTIONS) >= 2;
    s->potion_rule[1] = __builtin_popcount(h & POTIONS) >= 2;
    s->picks[0] = s->picks[1] = 0;
    s->picks_left[0] = s->picks_left[1] = s->round;
    s->phase = EXCHANGE; s->to_act = 0; s->leader = 0;
    s->lead_card = -1; s->declared = -1;
    s->nranks = 0;
    s->tricks[0] = s->tricks[1] = 0;
}

static uint32_t legal_mask(const State *s) {
    int p = s->to_act;
    switch (s->phase) {
    case FOLLOW: {
        uint32_t hand = s->hands[p];
        if (s->lead_card >= FIRST_POTION) {           /* T3b */
            uint32_t same = hand & COLOUR_MASK[s->declared];
            return same ? same : hand;
        }
        uint32_t colour = COLOUR_MASK[colour_of(s->lead_card)];  /* T3a */
        return (hand & colour) ? hand & (colour | POTIONS) : hand;
    }
    case LEAD: return s->hands[p];                    /* T1 */
    case DECLARE: return DECLARE_MASK;                /* T2 */
    case GAME_OVER: return 0;
    default: {                                        /* R2.2 exchange, T6b swap */
        uint32_t m = s->hands[p] & ~s->picks[p];
        if (s->phase == EXCHANGE && s->potion_rule[p] && s->picks_left[p] == 1 &&
            !(s->picks[p] & POTIONS))
            m &= POTIONS;
        return m;
    }
    }
}

static void rank_colour(State *s, int card) {         /* T4 */
    if (card >= FIRST_POTION) return;
    int c = colour_of(card);
    for (int i = 0; i < s->nranks; i++) if (s->ranks[i] == c) return;
    s->ranks[s->nranks++] = c;
    if (s->nranks == 2) s->ranks[s->nranks++] = 3 - s->ranks[0] - s->ranks[1];
}

static int rank_index(const State *s, int colour) {
    for (int i = 0; i < s->nranks; i++) if (s->ranks[i] == colour) return i;
    return -1;
}

static void end_round(State *s) {                     /* R2.4 */
    int diff = s->tricks[0] - s->tricks[1];
    s->marker += diff < 0 ? -diff : diff;
    if (s->marker > TRACK_END) s->marker = TRACK_END;
    if (s->marker >= TRACK_END || s->round == MAX_ROUNDS) {
        s->winner = s->marker >= TRACK_END ? 1 : 0;
        s->phase = GAME_OVER; s->to_act = -1;
    } else {
        s->round++;
        start_round(s);
    }
}

static void finish_trick(State *s, int follow) {      /* T5, T6, T7 */
    int leader = s->leader, lead = s->lead_card, leader_wins;
    if (lead >= FIRST_POTION || follow >= FIRST_POTION) {
        leader_wins = strength2(lead) > strength2(follow);
    } else if (colour_of(lead) == colour_of(follow)) {
        leader_wins = lead > follow;
    } else {
        leader_wins = rank_index(s, colour_of(lead)) > rank_index(s, colour_of(follow));
    }
    int winner = leader_wins ? leader : 1 - leader, loser = 1 - winner;
    s->tricks[winner]++;
    int effect = E_NONE;
    if ((lead >= FIRST_POTION) != (follow >= FIRST_POTION)) {
        int other = lead >= FIRST_POTION ? follow : lead;
        effect = 1 + colour_of(other);                /* pride 1, wrath 2, greed 3 */
    }
    if (effect == E_PRIDE) {
        if (s->tricks[loser] > 0) { s->tricks[loser]--; s->tricks[winner]++; }
    } else if (effect == E_WRATH) {
        s->nranks = 0;
    }
    s->lead_card = -1; s->declared = -1; s->leader = winner;
    int hand_size = __builtin_popcount(s->hands[0]);
    if (hand_size == 0) {
        end_round(s);
    } else if (effect == E_GREED) {
        int n = hand_size < GREED_SWAP ? hand_size : GREED_SWAP;
        s->phase = SWAP; s->picks_left[0] = s->picks_left[1] = n; s->to_act = 0;
    } else {
        s->phase = LEAD; s->to_act = winner;
    }
}

static void hand_over_picks(State *s) {
    uint32_t j = s->picks[0], h = s->picks[1];
    s->hands[0] = (s->hands[0] ^ j) | h;
    s->hands[1] = (s->hands[1] ^ h) | j;
    s->picks[0] = s->picks[1] = 0;
    if (s->phase == EXCHANGE) s->leader = s->marker < HYDE_LEADS_FROM ? 0 : 1;  /* R3 */
    s->phase = LEAD; s->to_act = s->leader;
}

/* Applies a legal action; returns 0, or -1 when the action is not legal. */
static int apply(State *s, int a) {
    if (a < 0 || a >= NUM_ACTIONS || !((legal_mask(s) >> a) & 1)) return -1;
    int p = s->to_act;
    uint32_t bit = 1u << a;
    switch (s->phase) {
    case LEAD:
        s->hands[p] ^= bit; s->lead_card = a; s->leader = p;
        if (a >= FIRST_POTION) { s->phase = DECLARE; }
        else { rank_colour(s, a); s->phase = FOLLOW; s->to_act = 1 - p; }
        break;
    case FOLLOW:
        s->hands[p] ^= bit; rank_colour(s, a); finish_trick(s, a);
        break;
    case DECLARE:
        s->declared = a - DECLARE_BASE; s->phase = FOLLOW; s->to_act = 1 - p;
        break;
    default:
        s->picks[p] |= bit;
        if (--s->picks_left[p] == 0) {
            if (p == 0) s->to_act = 1; else hand_over_picks(s);
        }
    }
    return 0;
}

/* splitmix64: small, fast and well mixed. */
static inline uint64_t next_random(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int random_legal(uint32_t mask, uint64_t *rng) {
    int k = (int)(next_random(rng) % (uint64_t)__builtin_popcount(mask));
    while (k--) mask &= mask - 1;
    return __builtin_ctz(mask);
}

/* --- information-set MCTS (SO-ISMCTS), the loop of agents/ismcts.py ---- */

/* What the searching player's view fixes, and how the rest is drawn: the
 * fields of the tuple that agents.rollout.search_spec builds. */
typedef struct {
    int player;
    State base;                 /* the view's public state and the player's own side */
    uint32_t dealt, opp_known, allowed, opp_seen;
    int opp_unknown, max_potions, picking, made, required;
} Spec;
#define SPEC_FIELDS 23

static double uniform01(uint64_t *rng) { return (next_random(rng) >> 11) * 0x1.0p-53; }

/* A uniformly random `size`-card subset of `pool` (partial Fisher-Yates). */
static uint32_t random_subset(uint32_t pool, int size, uint64_t *rng) {
    int ids[32], n = 0;
    for (uint32_t m = pool; m; m &= m - 1) ids[n++] = __builtin_ctz(m);
    uint32_t out = 0;
    for (int i = 0; i < size; i++) {
        int j = i + (int)(next_random(rng) % (uint64_t)(n - i));
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
    for (int r = w->round; r < MAX_ROUNDS; r++) {   /* R2.1 for the rounds to come */
        int cards[25];
        for (int i = 0; i < 25; i++) cards[i] = i;
        w->deals[r][0] = w->deals[r][1] = 0;
        for (int i = 0; i < 20; i++) {
            int j = i + (int)(next_random(rng) % (uint64_t)(25 - i));
            int t = cards[i]; cards[i] = cards[j]; cards[j] = t;
            w->deals[r][i / 10] |= 1u << cards[i];
        }
    }
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

/* Runs up to n simulations (fewer if `budget` seconds pass first); returns the
 * number run, -1 when memory ran out or -2 when the spec admits no world. */
static int run_ismcts(const Spec *sp, int n, double c, double budget, uint64_t rng, Tree *t) {
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
            uint32_t mask = legal_mask(&s);
            uint32_t untried = mask & ~t->nodes[node].child_mask;
            if (untried) {                              /* expand one untried action */
                int a = random_legal(untried, &rng);
                int child = new_node(t, s.to_act);
                if (child < 0) return -1;
                t->nodes[node].child[a] = child;
                t->nodes[node].child_mask |= 1u << a;
                apply(&s, a);
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
            apply(&s, best);
            path[depth++] = node;
        }
        while (s.phase != GAME_OVER) apply(&s, random_legal(legal_mask(&s), &rng));
        for (int i = 0; i < depth; i++) {
            Node *p = &t->nodes[path[i]];
            p->visits++;
            p->wins += p->player == s.winner;
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

static inline uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

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
    return mix64(w1) ^ mix64(w2 + 0x9E3779B97F4A7C15ull) ^ mix64(w3 + 0x632BE59BD9B4E019ull);
}

/* Moves searched at a node: the legal ones, with a player's picks taken in
 * increasing order from `floor` and only where enough cards remain above. */
static uint32_t search_moves(const State *s, int floor) {
    uint32_t mask = legal_mask(s);
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
        apply(&c, m);
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

/* --- tuple <-> State -------------------------------------------------- */

/* Reads a tuple of exactly n ints into v; `what` names it in the error. */
static int read_ints(PyObject *t, int n, long *v, const char *what) {
    if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != n) {
        PyErr_Format(PyExc_TypeError, "%s is a tuple of %d ints", what, n);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        v[i] = PyLong_AsLong(PyTuple_GET_ITEM(t, i));
        if (v[i] == -1 && PyErr_Occurred()) return -1;
    }
    return 0;
}

static int unpack(PyObject *t, State *s) {
    long v[NFIELDS];
    if (read_ints(t, NFIELDS, v, "a core state") < 0) return -1;
    s->round = v[0]; s->marker = v[1]; s->phase = v[2]; s->to_act = v[3]; s->leader = v[4];
    s->hands[0] = v[5]; s->hands[1] = v[6]; s->picks[0] = v[7]; s->picks[1] = v[8];
    s->picks_left[0] = v[9]; s->picks_left[1] = v[10];
    s->potion_rule[0] = v[11]; s->potion_rule[1] = v[12];
    s->lead_card = v[13]; s->declared = v[14];
    long r = v[15];
    s->nranks = (int)(r >> 6);
    for (int i = 0; i < 3; i++) s->ranks[i] = (int)((r >> (2 * i)) & 3);
    s->tricks[0] = v[16]; s->tricks[1] = v[17];
    for (int i = 0; i < 3; i++) { s->deals[i][0] = v[18 + 2 * i]; s->deals[i][1] = v[19 + 2 * i]; }
    s->winner = v[24];
    if (s->round < 1 || s->round > MAX_ROUNDS || s->phase < 0 || s->phase > GAME_OVER ||
        s->nranks > 3) {
        PyErr_SetString(PyExc_ValueError, "core state out of range");
        return -1;
    }
    return 0;
}

static PyObject *pack(const State *s) {
    long r = (long)s->nranks << 6;
    for (int i = 0; i < s->nranks; i++) r |= (long)s->ranks[i] << (2 * i);
    return Py_BuildValue(
        "(iiiiikkkkiiiiiiliikkkkkki)", s->round, s->marker, s->phase, s->to_act, s->leader,
        (unsigned long)s->hands[0], (unsigned long)s->hands[1], (unsigned long)s->picks[0],
        (unsigned long)s->picks[1], s->picks_left[0], s->picks_left[1], s->potion_rule[0],
        s->potion_rule[1], s->lead_card, s->declared, r, s->tricks[0], s->tricks[1],
        (unsigned long)s->deals[0][0], (unsigned long)s->deals[0][1],
        (unsigned long)s->deals[1][0], (unsigned long)s->deals[1][1],
        (unsigned long)s->deals[2][0], (unsigned long)s->deals[2][1], s->winner);
}

/* --- Python functions ------------------------------------------------- */

static PyObject *py_legal_mask(PyObject *self, PyObject *arg) {
    State s;
    if (unpack(arg, &s) < 0) return NULL;
    return PyLong_FromUnsignedLong(legal_mask(&s));
}

static PyObject *py_apply(PyObject *self, PyObject *args) {
    PyObject *t; int a; State s;
    if (!PyArg_ParseTuple(args, "Oi", &t, &a) || unpack(t, &s) < 0) return NULL;
    if (apply(&s, a) < 0) {
        PyErr_Format(PyExc_ValueError, "action %d is not legal in this core state", a);
        return NULL;
    }
    return pack(&s);
}

/* Plays uniformly random legal actions to the end of the game `n` times from
 * the same state; returns the number of games Hyde won. */
static PyObject *py_rollouts(PyObject *self, PyObject *args) {
    PyObject *t; unsigned long long seed; int n; State start;
    if (!PyArg_ParseTuple(args, "OKi", &t, &seed, &n) || unpack(t, &start) < 0) return NULL;
    uint64_t rng = seed;
    int hyde_wins = 0;
    for (int i = 0; i < n; i++) {
        State s = start;
        while (s.phase != GAME_OVER) apply(&s, random_legal(legal_mask(&s), &rng));
        hyde_wins += s.winner;
    }
    return PyLong_FromLong(hyde_wins);
}

static int unpack_spec(PyObject *t, Spec *sp) {
    long v[SPEC_FIELDS];
    if (read_ints(t, SPEC_FIELDS, v, "a search spec") < 0) return -1;
    int me = (int)v[0], opp = 1 - me;
    State *b = &sp->base;
    memset(sp, 0, sizeof(Spec));
    sp->player = me;
    b->round = v[1]; b->marker = v[2]; b->phase = v[3]; b->to_act = v[4]; b->leader = v[5];
    b->hands[me] = v[6]; sp->dealt = v[7]; b->picks[me] = v[8]; b->picks_left[me] = v[9];
    b->potion_rule[me] = __builtin_popcount(sp->dealt & POTIONS) >= 2;
    b->lead_card = v[10]; b->declared = v[11];
    b->nranks = (int)(v[12] >> 6);
    for (int i = 0; i < 3; i++) b->ranks[i] = (int)((v[12] >> (2 * i)) & 3);
    b->tricks[me] = v[13]; b->tricks[opp] = v[14]; b->winner = v[15];
    sp->opp_known = v[16]; sp->allowed = v[17]; sp->opp_unknown = v[18];
    sp->max_potions = v[19]; sp->opp_seen = v[20]; sp->made = v[21]; sp->required = v[22];
    sp->picking = b->phase == EXCHANGE || b->phase == SWAP;
    uint32_t potions = sp->allowed & POTIONS;
    int np = __builtin_popcount(potions), most = sp->max_potions < np ? sp->max_potions : np;
    if ((me != 0 && me != 1) || b->round < 1 || b->round > MAX_ROUNDS || b->phase < 0 ||
        b->phase >= GAME_OVER || b->nranks > 3 || sp->max_potions < 0 || sp->max_potions > 4 ||
        sp->opp_unknown < 0 || sp->made < 0 || sp->made > sp->required ||
        (b->phase == DECLARE || b->phase == FOLLOW) != (b->lead_card >= 0) ||
        sp->opp_unknown > __builtin_popcount(sp->allowed & ~POTIONS) + most ||
        sp->made > __builtin_popcount(sp->opp_known) + sp->opp_unknown) {
        PyErr_SetString(PyExc_ValueError, "search spec out of range or inconsistent");
        return -1;
    }
    return 0;
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
    return pack(&w);
}

/* ismcts(spec, n, c, seed, budget) -> (visits, wins, available, simulations):
 * SO-ISMCTS from the view that `spec` describes, with n simulations at most
 * and `budget` seconds at most (0: no limit). The first three are tuples of 28
 * ints, the statistics of the root's child for each action (0 where the
 * search never tried it). */
static PyObject *py_ismcts(PyObject *self, PyObject *args) {
    PyObject *t; int n; double c, budget; unsigned long long seed; Spec sp;
    if (!PyArg_ParseTuple(args, "OidKd", &t, &n, &c, &seed, &budget) || unpack_spec(t, &sp) < 0)
        return NULL;
    if (n < 1 || c < 0 || budget < 0) {
        PyErr_SetString(PyExc_ValueError, "ismcts needs n >= 1, c >= 0 and budget >= 0");
        return NULL;
    }
    Tree tree = {NULL, 0, n < 4096 ? n + 1 : 4096};
    tree.nodes = malloc(sizeof(Node) * (size_t)tree.capacity);
    if (tree.nodes == NULL) return PyErr_NoMemory();
    int done;
    Py_BEGIN_ALLOW_THREADS
    done = run_ismcts(&sp, n, c, budget, seed, &tree);
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
    if (!PyArg_ParseTuple(args, "OOl", &t, &table, &max_nodes) || unpack(t, &s) < 0)
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
    uint32_t moves = legal_mask(&s);
    double values[NUM_ACTIONS];
    /* The GIL stays held: the shared table allows one search at a time. */
    for (int m = 0; m < NUM_ACTIONS && !S.aborted; m++) {
        if (!((moves >> m) & 1)) continue;
        State c = s;
        apply(&c, m);
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

static PyMethodDef methods[] = {
    {"legal_mask", py_legal_mask, METH_O, "Legal action mask of a core state."},
    {"apply", py_apply, METH_VARARGS, "apply(state, action) -> the next core state."},
    {"rollouts", py_rollouts, METH_VARARGS,
     "rollouts(state, seed, n) -> games Hyde won among n uniformly random playouts."},
    {"determinise", py_determinise, METH_VARARGS,
     "determinise(spec, seed) -> a core state consistent with the view of the search spec."},
    {"ismcts", py_ismcts, METH_VARARGS,
     "ismcts(spec, n, c, seed, budget) -> (visits, wins, available by action, simulations)."},
    {"solve_round", py_solve_round, METH_VARARGS,
     "solve_round(state, table, max_nodes) -> (values by action or None, nodes searched)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_rollout",
                                    "Fast rules core for search (see agents/rollout.py).", -1,
                                    methods};

PyMODINIT_FUNC PyInit__rollout(void) { return PyModule_Create(&module); }

/*
 * Fast rules core for search: the rules of RULES.md over card masks, in C.
 *
 * jekyll_hyde_env.engine is the source of truth; this core re-states the same
 * rules (R2-R4, T1-T7) so that ISMCTS can play thousands of random games per
 * second. tests/test_rollout_core.py drives random games through both in
 * lockstep and compares legal masks and states after every action.
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

/* --- tuple <-> State -------------------------------------------------- */

static int unpack(PyObject *t, State *s) {
    if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != NFIELDS) {
        PyErr_Format(PyExc_TypeError, "a core state is a tuple of %d ints", NFIELDS);
        return -1;
    }
    long v[NFIELDS];
    for (int i = 0; i < NFIELDS; i++) {
        v[i] = PyLong_AsLong(PyTuple_GET_ITEM(t, i));
        if (v[i] == -1 && PyErr_Occurred()) return -1;
    }
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

static PyMethodDef methods[] = {
    {"legal_mask", py_legal_mask, METH_O, "Legal action mask of a core state."},
    {"apply", py_apply, METH_VARARGS, "apply(state, action) -> the next core state."},
    {"rollouts", py_rollouts, METH_VARARGS,
     "rollouts(state, seed, n) -> games Hyde won among n uniformly random playouts."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_rollout",
                                    "Fast rules core for search (see agents/rollout.py).", -1,
                                    methods};

PyMODINIT_FUNC PyInit__rollout(void) { return PyModule_Create(&module); }

/*
 * jekyll_hyde_env.core._core: many games stepped in one call, written into
 * numpy arrays the caller owns.
 *
 * `Games` holds N game states (jh_rules.h) and writes, after every call that
 * moves a game, that game's row of the output arrays: the observation and
 * action mask of the player to act (jh_observe.h), the player to act, this
 * call's rewards, whether the game is over, its phase, round, marker, trick
 * counts, winner and deals. The arrays are allocated once by
 * jekyll_hyde_env.vector.BatchedGames and handed over at construction as
 * writable buffers; no call allocates. That module is the documented API;
 * this one checks only what C must check to stay memory-safe.
 *
 * Randomness: game i of a batch reset with (seed, first_game) draws its deals
 * from its own splitmix64 stream, keyed by seed and first_game + i, so a game
 * is the same whatever the batch size and however the games are split. Two
 * more streams per game draw random legal actions and the caller's draws.
 *
 * With numpy streams (the constructor's `numpy_streams`), each game instead
 * holds two of numpy's generators, `numpy.random.Generator(PCG64(seed))`
 * reproduced bit for bit below (SeedSequence, PCG64, the bounded integers of
 * `Generator.integers` and the shuffle of `Generator.permutation`): one deals
 * (and draws the seat and opponent seed of an episode as JekyllHydeGymEnv.reset
 * does from its np_random), the other plays the random player's moves as
 * RandomAgent does from its own generator. The splitmix64 streams still draw
 * sample() and draw().
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "jh_observe.h"
#include "jh_pystate.h"
#include "jh_rules.h"

/* The output arrays, in the constructor's order, with their bytes per game. */
enum { B_OBS, B_MASK, B_PLAYER, B_REWARDS, B_TERMINATED, B_PHASE, B_ROUND, B_MARKER,
       B_TRICKS, B_WINNER, B_DEALS, B_RANKS, NUM_BUFFERS };
static const Py_ssize_t BYTES_PER_GAME[NUM_BUFFERS] = {
    JH_OBS_SIZE, JH_NUM_ACTIONS, 1, 2 * sizeof(float), 1, 1, 1, 1, 2, 1, 6 * sizeof(uint32_t),
    JH_NUM_COLOURS};
static const char *BUFFER_NAMES[NUM_BUFFERS] = {
    "observation", "action_mask", "current_player", "rewards", "terminated", "phase",
    "round", "marker", "tricks", "winner", "deals", "ranks"};

/* The actions of a game so far (every game has at most 132 decisions). */
enum { LOG_CAPACITY = 160 };

/* --- numpy's Generator(PCG64), bit for bit ------------------------------------
 * numpy/random: SeedSequence (bit_generator.pyx), PCG64 (pcg64.h, XSL-RR output of
 * a 128-bit LCG, stepped before each output), next_uint32 (the high half of a
 * 64-bit output is kept for the next call), Generator.integers' bounded draw
 * (Lemire's method on 32 bits, distributions.c) and Generator.permutation's
 * Fisher-Yates shuffle (random_interval: masked rejection). */
typedef struct {
    uint64_t state_hi, state_lo, inc_hi, inc_lo;
    uint32_t uinteger;
    int has_uint32;
} NpRng;

#define NP_MULT_HI 2549297995355413924ull
#define NP_MULT_LO 4865540595714422341ull

static inline void np_mul64(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo) {
#if defined(__SIZEOF_INT128__) && !defined(JH_NO_INT128)
    unsigned __int128 p = (unsigned __int128)a * b;
    *hi = (uint64_t)(p >> 64);
    *lo = (uint64_t)p;
#else
    uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;
    *lo = (mid << 32) | (uint32_t)p00;
    *hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
#endif
}

/* state = state * multiplier + inc (mod 2**128) */
static inline void np_step(NpRng *r) {
    uint64_t hi, lo;
    np_mul64(r->state_lo, NP_MULT_LO, &hi, &lo);
    hi += r->state_hi * NP_MULT_LO + r->state_lo * NP_MULT_HI;
    lo += r->inc_lo;
    hi += r->inc_hi + (lo < r->inc_lo);
    r->state_hi = hi;
    r->state_lo = lo;
}

static inline uint64_t np_next64(NpRng *r) {
    np_step(r);
    uint64_t x = r->state_hi ^ r->state_lo;
    unsigned rot = (unsigned)(r->state_hi >> 58);
    return (x >> rot) | (x << ((64 - rot) & 63));
}

static inline uint32_t np_next32(NpRng *r) {
    if (r->has_uint32) {
        r->has_uint32 = 0;
        return r->uinteger;
    }
    uint64_t next = np_next64(r);
    r->has_uint32 = 1;
    r->uinteger = (uint32_t)(next >> 32);
    return (uint32_t)next;
}

/* Generator.integers(n) for 1 <= n < 2**32 (n == 1 draws nothing). */
static inline uint32_t np_integers(NpRng *r, uint32_t n) {
    if (n <= 1) return 0;
    uint64_t m = (uint64_t)np_next32(r) * n;
    uint32_t leftover = (uint32_t)m;
    if (leftover < n) {
        uint32_t threshold = (uint32_t)(-n) % n;   /* (2**32 - n) % n */
        while (leftover < threshold) {
            m = (uint64_t)np_next32(r) * n;
            leftover = (uint32_t)m;
        }
    }
    return (uint32_t)(m >> 32);
}

/* random_interval(max) for max < 2**32: uniform in [0, max]. */
static inline uint32_t np_interval(NpRng *r, uint32_t max) {
    if (max == 0) return 0;
    uint32_t mask = max, value;
    mask |= mask >> 1; mask |= mask >> 2; mask |= mask >> 4; mask |= mask >> 8; mask |= mask >> 16;
    while ((value = np_next32(r) & mask) > max) {}
    return value;
}

/* R2.1 as engine.rules.deal_from_rng: order = rng.permutation(n) over the n cards in
 * play (the 25 of the full game, or a variant's deck, V1); the first hand to Jekyll,
 * the next to Hyde (10 each in the full game, V2). */
static inline void np_deal(NpRng *r, uint32_t hands[2], const JhVariant *v) {
    int order[JH_NUM_CARDS], n = v->deck_size, size = v->hand_size;
    for (int i = 0; i < n; i++) order[i] = i;
    for (int i = n - 1; i >= 1; i--) {
        int j = (int)np_interval(r, (uint32_t)i);
        int t = order[i]; order[i] = order[j]; order[j] = t;
    }
    hands[0] = hands[1] = 0;
    for (int i = 0; i < size; i++) hands[0] |= 1u << v->ids[order[i]];
    for (int i = size; i < 2 * size; i++) hands[1] |= 1u << v->ids[order[i]];
}

static inline uint32_t np_hashmix(uint32_t value, uint32_t *hash_const) {
    value ^= *hash_const;
    *hash_const *= 0x931e8875u;
    value *= *hash_const;
    return value ^ (value >> 16);
}

static inline uint32_t np_mix(uint32_t x, uint32_t y) {
    uint32_t result = 0xca01f9ddu * x - 0x4973f715u * y;
    return result ^ (result >> 16);
}

/* Word i of the entropy a (na words) followed by b (nb words). */
static inline uint32_t np_word(const uint32_t *a, Py_ssize_t na, const uint32_t *b, Py_ssize_t i) {
    return i < na ? a[i] : b[i - na];
}

/* PCG64(SeedSequence(entropy)): the entropy's 32-bit words, least significant
 * first (numpy's words of an int; a list [x, y] is x's words then y's), given
 * as a (na words) then b (nb words). */
static void np_seed(NpRng *r, const uint32_t *a, Py_ssize_t na, const uint32_t *b,
                    Py_ssize_t nb) {
    uint32_t pool[4], hash_const = 0x43b0d7e5u;
    Py_ssize_t n = na + nb;
    for (int i = 0; i < 4; i++)
        pool[i] = np_hashmix(i < n ? np_word(a, na, b, i) : 0u, &hash_const);
    for (int src = 0; src < 4; src++)
        for (int dst = 0; dst < 4; dst++)
            if (src != dst) pool[dst] = np_mix(pool[dst], np_hashmix(pool[src], &hash_const));
    for (Py_ssize_t src = 4; src < n; src++)
        for (int dst = 0; dst < 4; dst++)
            pool[dst] = np_mix(pool[dst], np_hashmix(np_word(a, na, b, src), &hash_const));
    uint32_t words[8], hash_b = 0x8b51f9ddu;
    for (int i = 0; i < 8; i++) {
        uint32_t v = pool[i % 4] ^ hash_b;
        hash_b *= 0x58f38dedu;
        v *= hash_b;
        words[i] = v ^ (v >> 16);
    }
    uint64_t v[4];
    for (int k = 0; k < 4; k++) v[k] = (uint64_t)words[2 * k] | ((uint64_t)words[2 * k + 1] << 32);
    /* pcg64_set_seed: initstate = v0 * 2**64 + v1, initseq = v2 * 2**64 + v3 */
    r->state_hi = r->state_lo = 0;
    r->inc_hi = (v[2] << 1) | (v[3] >> 63);
    r->inc_lo = (v[3] << 1) | 1u;
    np_step(r);
    r->state_lo += v[1];
    r->state_hi += v[0] + (r->state_lo < v[1]);
    np_step(r);
    r->has_uint32 = 0;
    r->uinteger = 0;
}

/* A uniformly random set bit of a non-empty mask, as RandomAgent chooses:
 * legal_actions[rng.integers(len(legal_actions))], the actions ascending. */
static inline int np_random_legal(uint32_t mask, NpRng *r) {
    int k = (int)np_integers(r, (uint32_t)jh_popcount(mask));
    while (k--) mask &= mask - 1;
    return __builtin_ctz(mask);
}

/* Flags of new_episodes(): what an episode draws besides its deals. */
enum { EPISODE_DRAW_SEAT = 1, EPISODE_SEED_PLAYER = 2 };

typedef struct {
    PyObject_HEAD
    Py_ssize_t n;
    int autoreset, illegal_terminate, numpy_streams;
    State *games;
    uint64_t *deal_rng, *play_rng, *draw_rng;
    NpRng *np_deal, *np_play;  /* with numpy streams */
    uint8_t *done;        /* the game is over (or was ended by an illegal action) */
    int8_t *last_player;  /* whose view `observation` shows once the game is over */
    uint8_t *log;         /* LOG_CAPACITY actions per game */
    uint8_t *log_len;
    Py_buffer buffers[NUM_BUFFERS];
    int held;             /* how many buffers are held (for cleanup) */
    int8_t *obs, *mask, *player, *terminated, *phase, *round, *marker, *tricks, *winner, *ranks;
    float *rewards;
    uint32_t *deals;
    JhVariant variant;    /* the version of the game every game plays (RULES.md V1-V7) */
    const JhVariant *game_variant;  /* &variant, or NULL for the full game */
} Games;

/* --- writing one game's row ------------------------------------------------ */

static void write_row(Games *g, Py_ssize_t i) {
    const State *s = &g->games[i];
    int viewer = s->to_act >= 0 && !g->done[i] ? s->to_act : g->last_player[i];
    jh_encode(s, viewer, g->obs + i * JH_OBS_SIZE);
    jh_write_mask(s, g->done[i] ? -1 : s->to_act, g->mask + i * JH_NUM_ACTIONS);
    g->player[i] = (int8_t)(g->done[i] ? -1 : s->to_act);
    g->terminated[i] = (int8_t)g->done[i];
    g->phase[i] = (int8_t)s->phase;
    g->round[i] = (int8_t)s->round;
    g->marker[i] = (int8_t)s->marker;
    g->tricks[2 * i] = (int8_t)s->tricks[0];
    g->tricks[2 * i + 1] = (int8_t)s->tricks[1];
    g->winner[i] = (int8_t)s->winner;
    uint32_t *d = g->deals + 6 * i;
    for (int r = 0; r < 3; r++) { d[2 * r] = s->deals[r][0]; d[2 * r + 1] = s->deals[r][1]; }
    int8_t *ranks = g->ranks + JH_NUM_COLOURS * i;
    for (int k = 0; k < JH_NUM_COLOURS; k++) ranks[k] = (int8_t)(k < s->nranks ? s->ranks[k] : -1);
}

/* A new episode of game i: its next deals (rounds [fixed, 3) from its stream).
 * With numpy streams, as JekyllHydeGymEnv.reset from its np_random: the seat
 * first (rng.integers(2) into seat[i], with EPISODE_DRAW_SEAT), then the deals,
 * then the opponent's seed (rng.integers(2**31), with EPISODE_SEED_PLAYER),
 * which seeds the random player's generator as RandomAgent.reset(seed) does. */
static void new_episode(Games *g, Py_ssize_t i, const uint32_t *fixed, int fixed_rounds,
                        int flags, int8_t *seat) {
    uint32_t deals[3][2] = {{0, 0}, {0, 0}, {0, 0}};
    const JhVariant *v = &g->variant;
    if (flags & EPISODE_DRAW_SEAT) seat[i] = (int8_t)np_integers(&g->np_deal[i], 2);
    for (int r = 0; r < v->rounds; r++) {
        if (r < fixed_rounds) { deals[r][0] = fixed[2 * r]; deals[r][1] = fixed[2 * r + 1]; }
        else if (g->numpy_streams) np_deal(&g->np_deal[i], deals[r], v);
        else jh_deal_in(&g->deal_rng[i], deals[r], v);
    }
    if (flags & EPISODE_SEED_PLAYER) {
        uint32_t seed = np_integers(&g->np_deal[i], 1u << 31);
        np_seed(&g->np_play[i], &seed, 1, NULL, 0);
    }
    jh_new_game_in(&g->games[i], deals, g->game_variant);
    g->rewards[2 * i] = g->rewards[2 * i + 1] = 0.0f;
    g->done[i] = 0;
    g->last_player[i] = 0;
    g->log_len[i] = 0;
    write_row(g, i);
}

/* A random legal action of game i's random player. */
static inline int random_legal(Games *g, Py_ssize_t i, uint32_t mask) {
    return g->numpy_streams ? np_random_legal(mask, &g->np_play[i])
                            : jh_random_legal(mask, &g->play_rng[i]);
}

/* Applies a legal action to game i and records the end of the game. */
static void apply_legal(Games *g, Py_ssize_t i, int action) {
    State *s = &g->games[i];
    int p = s->to_act;
    if (g->log_len[i] < LOG_CAPACITY) g->log[i * LOG_CAPACITY + g->log_len[i]++] = (uint8_t)action;
    jh_apply(s, action);
    if (s->phase == JH_GAME_OVER) {                                    /* R4 */
        g->done[i] = 1;
        g->last_player[i] = (int8_t)p;
        g->rewards[2 * i + s->winner] = 1.0f;
        g->rewards[2 * i + 1 - s->winner] = -1.0f;
    }
}

/* --- construction ---------------------------------------------------------- */

static void games_release(Games *g) {
    for (int k = 0; k < g->held; k++) PyBuffer_Release(&g->buffers[k]);
    g->held = 0;
    PyMem_Free(g->games); PyMem_Free(g->deal_rng); PyMem_Free(g->play_rng);
    PyMem_Free(g->draw_rng); PyMem_Free(g->done); PyMem_Free(g->last_player);
    PyMem_Free(g->np_deal); PyMem_Free(g->np_play); PyMem_Free(g->log);
    PyMem_Free(g->log_len);
    g->games = NULL; g->deal_rng = g->play_rng = g->draw_rng = NULL;
    g->done = NULL; g->last_player = NULL;
    g->np_deal = g->np_play = NULL; g->log = g->log_len = NULL;
}

static void games_dealloc(Games *g) {
    games_release(g);
    Py_TYPE(g)->tp_free((PyObject *)g);
}

static int games_init(Games *g, PyObject *args, PyObject *kwargs) {
    PyObject *objects[NUM_BUFFERS], *variant = Py_None;
    Py_ssize_t n;
    int autoreset, illegal_terminate, numpy_streams;
    games_release(g);
    if (!PyArg_ParseTuple(args, "npppOOOOOOOOOOOO|O", &n, &autoreset, &illegal_terminate,
                          &numpy_streams, &objects[0], &objects[1], &objects[2], &objects[3],
                          &objects[4], &objects[5], &objects[6], &objects[7], &objects[8],
                          &objects[9], &objects[10], &objects[11], &variant))
        return -1;
    g->variant = JH_FULL;
    g->game_variant = NULL;
    if (variant != Py_None) {  /* engine.variant.Variant.core_fields() */
        long f[JH_VARIANT_FIELDS];
        if (jh_read_ints(variant, JH_VARIANT_FIELDS, f, "a variant") < 0) return -1;
        if (jh_variant_from_fields(f, &g->variant) < 0) {
            PyErr_SetString(PyExc_ValueError, "an impossible variant");
            return -1;
        }
        g->game_variant = &g->variant;
    }
    if (n < 1) {
        PyErr_Format(PyExc_ValueError, "num_games must be >= 1, got %zd", n);
        return -1;
    }
    for (int k = 0; k < NUM_BUFFERS; k++) {
        if (PyObject_GetBuffer(objects[k], &g->buffers[k], PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0)
            return -1;
        g->held = k + 1;
        if (g->buffers[k].len != n * BYTES_PER_GAME[k]) {
            PyErr_Format(PyExc_ValueError, "buffer %s holds %zd bytes, expected %zd",
                         BUFFER_NAMES[k], g->buffers[k].len, n * BYTES_PER_GAME[k]);
            return -1;
        }
    }
    g->n = n; g->autoreset = autoreset; g->illegal_terminate = illegal_terminate;
    g->numpy_streams = numpy_streams;
    g->games = PyMem_Calloc((size_t)n, sizeof(State));
    g->deal_rng = PyMem_Calloc((size_t)n, sizeof(uint64_t));
    g->play_rng = PyMem_Calloc((size_t)n, sizeof(uint64_t));
    g->draw_rng = PyMem_Calloc((size_t)n, sizeof(uint64_t));
    g->done = PyMem_Calloc((size_t)n, 1);
    g->last_player = PyMem_Calloc((size_t)n, 1);
    g->np_deal = PyMem_Calloc((size_t)n, sizeof(NpRng));
    g->np_play = PyMem_Calloc((size_t)n, sizeof(NpRng));
    g->log = PyMem_Calloc((size_t)n, LOG_CAPACITY);
    g->log_len = PyMem_Calloc((size_t)n, 1);
    if (!g->games || !g->deal_rng || !g->play_rng || !g->draw_rng || !g->done ||
        !g->last_player || !g->np_deal || !g->np_play || !g->log || !g->log_len) {
        PyErr_NoMemory();
        return -1;
    }
    g->obs = g->buffers[B_OBS].buf; g->mask = g->buffers[B_MASK].buf;
    g->player = g->buffers[B_PLAYER].buf; g->rewards = g->buffers[B_REWARDS].buf;
    g->terminated = g->buffers[B_TERMINATED].buf; g->phase = g->buffers[B_PHASE].buf;
    g->round = g->buffers[B_ROUND].buf; g->marker = g->buffers[B_MARKER].buf;
    g->tricks = g->buffers[B_TRICKS].buf; g->winner = g->buffers[B_WINNER].buf;
    g->deals = g->buffers[B_DEALS].buf; g->ranks = g->buffers[B_RANKS].buf;
    return 0;
}

/* --- buffer arguments -------------------------------------------------------- */

/* A buffer that must be given (None is refused); `writable` asks for one the C
 * code may write into. Returns 0, or -1 with a ValueError naming `what`. */
static int get_required(Games *g, PyObject *obj, Py_ssize_t itemsize, Py_ssize_t items,
                        const char *what, int writable, Py_buffer *buf) {
    buf->buf = NULL; buf->obj = NULL;
    if (obj == Py_None) {
        PyErr_Format(PyExc_ValueError, "%s is required", what);
        return -1;
    }
    if (PyObject_GetBuffer(obj, buf, PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0)) < 0) {
        buf->buf = NULL; buf->obj = NULL;
        if (PyErr_ExceptionMatches(PyExc_BufferError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "%s must be a %scontiguous array", what,
                         writable ? "writable " : "");
        }
        return -1;
    }
    if (buf->len != items * itemsize) {
        PyErr_Format(PyExc_ValueError, "%s holds %zd bytes, expected %zd", what, buf->len,
                     items * itemsize);
        PyBuffer_Release(buf);
        buf->buf = NULL; buf->obj = NULL;
        return -1;
    }
    return 0;
}

/* A read-only contiguous buffer of exactly n items of `itemsize` bytes, or
 * None (then buf->buf is NULL). Returns 0, or -1 with an exception set. */
static int get_input(Games *g, PyObject *obj, Py_ssize_t itemsize, Py_ssize_t items,
                     const char *what, Py_buffer *buf) {
    buf->buf = NULL; buf->obj = NULL;
    return obj == Py_None ? 0 : get_required(g, obj, itemsize, items, what, 0, buf);
}

static void release_input(Py_buffer *buf) {
    if (buf->obj != NULL) PyBuffer_Release(buf);
}

static int check_ready(Games *g) {
    if (g->games == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Games was not initialised");
        return -1;
    }
    return 0;
}

/* Fixed deals and fixed rounds go together; 0 to 3 rounds per game. */
static int check_fixed(Games *g, const uint32_t *fixed_deals, const int8_t *fixed_rounds) {
    if ((fixed_deals == NULL) != (fixed_rounds == NULL)) {
        PyErr_SetString(PyExc_ValueError, "fixed deals and fixed rounds go together");
        return -1;
    }
    for (Py_ssize_t i = 0; fixed_rounds && i < g->n; i++) {
        if (fixed_rounds[i] < 0 || fixed_rounds[i] > g->variant.rounds) {
            PyErr_Format(PyExc_ValueError, "fixed rounds[%zd] is %d; 0 to %d rounds", i,
                         (int)fixed_rounds[i], g->variant.rounds);
            return -1;
        }
    }
    return 0;
}

/* Game i's splitmix64 streams from one key. */
static void key_streams(Games *g, Py_ssize_t i, uint64_t game_key) {
    g->deal_rng[i] = game_key;
    g->play_rng[i] = jh_mix64(game_key ^ 0xBB67AE8584CAA73Bull);
    g->draw_rng[i] = jh_mix64(game_key ^ 0x3C6EF372FE94F82Bull);
}

/* --- methods --------------------------------------------------------------- */

/* reset(seed, first_game, fixed_deals or None, fixed_rounds or None) */
static PyObject *games_reset(Games *g, PyObject *args) {
    unsigned long long seed, first;
    PyObject *fixed_obj, *rounds_obj;
    if (check_ready(g) < 0 ||
        !PyArg_ParseTuple(args, "KKOO", &seed, &first, &fixed_obj, &rounds_obj))
        return NULL;
    if (g->numpy_streams) {
        PyErr_SetString(PyExc_ValueError, "games with numpy streams are seeded by seed_numpy");
        return NULL;
    }
    Py_buffer fixed, rounds;
    if (get_input(g, fixed_obj, 6 * sizeof(uint32_t), g->n, "fixed deals", &fixed) < 0)
        return NULL;
    if (get_input(g, rounds_obj, 1, g->n, "fixed rounds", &rounds) < 0) {
        release_input(&fixed);
        return NULL;
    }
    if (check_fixed(g, fixed.buf, rounds.buf) < 0) {
        release_input(&fixed); release_input(&rounds);
        return NULL;
    }
    const uint32_t *fixed_deals = fixed.buf;
    const int8_t *fixed_rounds = rounds.buf;
    uint64_t key = jh_mix64(seed ^ 0x6A09E667F3BCC908ull);
    for (Py_ssize_t i = 0; i < g->n; i++) {
        key_streams(g, i, jh_mix64(key + jh_mix64((uint64_t)first + (uint64_t)i)));
        int nfixed = fixed_rounds ? fixed_rounds[i] : 0;
        new_episode(g, i, fixed_deals ? fixed_deals + 6 * i : NULL, nfixed, 0, NULL);
    }
    release_input(&fixed);
    release_input(&rounds);
    Py_RETURN_NONE;
}

/* seed_numpy(words uint32 (N, k), k, counts int64 (N,), where uint8 (N,) or None):
 * game i's numpy streams from its seed, given as counts[i] 32-bit words (least
 * significant first): the dealer PCG64(SeedSequence(seed)), as default_rng(seed),
 * the random player default_rng([seed, 1]); its splitmix64 streams are keyed by
 * the words. Nothing is dealt. */
static PyObject *games_seed_numpy(Games *g, PyObject *args) {
    PyObject *words_obj, *counts_obj, *where_obj;
    Py_ssize_t k;
    if (check_ready(g) < 0 ||
        !PyArg_ParseTuple(args, "OnOO", &words_obj, &k, &counts_obj, &where_obj))
        return NULL;
    if (!g->numpy_streams) {
        PyErr_SetString(PyExc_ValueError, "seed_numpy needs games with numpy streams");
        return NULL;
    }
    if (k < 1) {
        PyErr_Format(PyExc_ValueError, "k must be >= 1, got %zd", k);
        return NULL;
    }
    Py_buffer words, counts, where;
    if (get_required(g, words_obj, k * (Py_ssize_t)sizeof(uint32_t), g->n, "words", 0, &words) < 0)
        return NULL;
    if (get_required(g, counts_obj, sizeof(int64_t), g->n, "counts", 0, &counts) < 0) {
        release_input(&words);
        return NULL;
    }
    if (get_input(g, where_obj, 1, g->n, "where", &where) < 0) {
        release_input(&words); release_input(&counts);
        return NULL;
    }
    const uint32_t *w = words.buf;
    const int64_t *c = counts.buf;
    const uint8_t *selected = where.buf;
    PyObject *result = Py_None;
    for (Py_ssize_t i = 0; i < g->n; i++) {
        if (selected && !selected[i]) continue;
        if (c[i] < 1 || c[i] > k) {
            PyErr_Format(PyExc_ValueError, "counts[%zd] is %lld; 1 to %zd words", i,
                         (long long)c[i], k);
            result = NULL;
            break;
        }
        const uint32_t *seed = w + i * k, one = 1;
        np_seed(&g->np_deal[i], seed, (Py_ssize_t)c[i], NULL, 0);
        np_seed(&g->np_play[i], seed, (Py_ssize_t)c[i], &one, 1);
        uint64_t key = 0x510E527FADE682D1ull;
        for (int64_t j = 0; j < c[i]; j++) key = jh_mix64(key ^ seed[j]) + (uint64_t)j;
        key_streams(g, i, key);
    }
    release_input(&words); release_input(&counts); release_input(&where);
    if (result == NULL) return NULL;
    Py_RETURN_NONE;
}

/* reset_where(where): a new episode for every game with where[i] != 0. */
static PyObject *games_reset_where(Games *g, PyObject *arg) {
    if (check_ready(g) < 0) return NULL;
    Py_buffer where;
    if (get_input(g, arg, 1, g->n, "where", &where) < 0) return NULL;
    const uint8_t *w = where.buf;
    for (Py_ssize_t i = 0; i < g->n; i++)
        if (w == NULL || w[i]) new_episode(g, i, NULL, 0, 0, NULL);
    release_input(&where);
    Py_RETURN_NONE;
}

/* new_episodes(where uint8 (N,) or None, flags uint8 (N,) or None, fixed deals or
 * None, fixed rounds or None, seats int8 (N,) or None): a new episode for every
 * selected game, with new_episode's flags (numpy streams only); a drawn seat
 * goes to seats[i]. */
static PyObject *games_new_episodes(Games *g, PyObject *args) {
    PyObject *where_obj, *flags_obj, *fixed_obj, *rounds_obj, *seats_obj;
    if (check_ready(g) < 0 || !PyArg_ParseTuple(args, "OOOOO", &where_obj, &flags_obj,
                                                &fixed_obj, &rounds_obj, &seats_obj))
        return NULL;
    Py_buffer where, flags, fixed, rounds, seats;
    Py_buffer *held[5] = {&where, &flags, &fixed, &rounds, &seats};
    where.obj = flags.obj = fixed.obj = rounds.obj = seats.obj = NULL;
    PyObject *result = NULL;
    if (get_input(g, where_obj, 1, g->n, "where", &where) < 0 ||
        get_input(g, flags_obj, 1, g->n, "flags", &flags) < 0 ||
        get_input(g, fixed_obj, 6 * sizeof(uint32_t), g->n, "fixed deals", &fixed) < 0 ||
        get_input(g, rounds_obj, 1, g->n, "fixed rounds", &rounds) < 0 ||
        (seats_obj != Py_None &&
         get_required(g, seats_obj, 1, g->n, "seats", 1, &seats) < 0) ||
        check_fixed(g, fixed.buf, rounds.buf) < 0)
        goto done;
    if (seats_obj == Py_None) seats.buf = NULL;
    const uint8_t *w = where.buf, *f = flags.buf;
    const uint32_t *fixed_deals = fixed.buf;
    const int8_t *fixed_rounds = rounds.buf;
    for (Py_ssize_t i = 0; f && i < g->n; i++) {
        if ((w && !w[i]) || !f[i]) continue;
        if (!g->numpy_streams || f[i] > (EPISODE_DRAW_SEAT | EPISODE_SEED_PLAYER) ||
            ((f[i] & EPISODE_DRAW_SEAT) && seats.buf == NULL)) {
            PyErr_Format(PyExc_ValueError,
                         "flags[%zd] is %d: flags need numpy streams, 1 (draw the seat into "
                         "seats) and 2 (seed the random player)", i, (int)f[i]);
            goto done;
        }
    }
    for (Py_ssize_t i = 0; i < g->n; i++) {
        if (w && !w[i]) continue;
        new_episode(g, i, fixed_deals ? fixed_deals + 6 * i : NULL,
                    fixed_rounds ? fixed_rounds[i] : 0, f ? f[i] : 0, seats.buf);
    }
    result = Py_None;
    Py_INCREF(result);
done:
    for (int k = 0; k < 5; k++) release_input(held[k]);
    return result;
}

/* step(actions int64 (N,), where uint8 (N,) or None) -> -1, or the index of the
 * first game whose action is illegal (then nothing has changed; only when the
 * games were built to raise on illegal actions). */
static PyObject *games_step(Games *g, PyObject *args) {
    PyObject *actions_obj, *where_obj;
    if (check_ready(g) < 0 || !PyArg_ParseTuple(args, "OO", &actions_obj, &where_obj))
        return NULL;
    Py_buffer actions_buf, where_buf;
    if (get_required(g, actions_obj, sizeof(int64_t), g->n, "actions", 0, &actions_buf) < 0)
        return NULL;
    if (get_input(g, where_obj, 1, g->n, "where", &where_buf) < 0) {
        release_input(&actions_buf);
        return NULL;
    }
    const int64_t *actions = actions_buf.buf;
    const uint8_t *where = where_buf.buf;
    Py_ssize_t bad = -1;
    if (!g->illegal_terminate) {           /* check every action before changing anything */
        for (Py_ssize_t i = 0; i < g->n && bad < 0; i++) {
            if ((where && !where[i]) || g->done[i]) continue;
            int64_t a = actions[i];
            if (a < 0 || a >= JH_NUM_ACTIONS || !((jh_legal_mask(&g->games[i]) >> a) & 1))
                bad = i;
        }
    }
    if (bad < 0) {
        memset(g->rewards, 0, (size_t)g->n * 2 * sizeof(float));
        for (Py_ssize_t i = 0; i < g->n; i++) {
            if (where && !where[i]) continue;
            if (g->done[i]) {
                if (g->autoreset) new_episode(g, i, NULL, 0, 0, NULL);
                continue;
            }
            State *s = &g->games[i];
            int64_t a = actions[i];
            if (a < 0 || a >= JH_NUM_ACTIONS || !((jh_legal_mask(s) >> a) & 1)) {
                /* illegal="terminate": the game ends, -1 for the player who erred */
                g->done[i] = 1;
                g->last_player[i] = (int8_t)s->to_act;
                g->rewards[2 * i + s->to_act] = -1.0f;
            } else {
                apply_legal(g, i, (int)a);
            }
            write_row(g, i);
        }
    }
    release_input(&actions_buf);
    release_input(&where_buf);
    return PyLong_FromSsize_t(bad);
}

/* sample(out int64 (N,)): a uniformly random legal action per game, -1 where over. */
static PyObject *games_sample(Games *g, PyObject *arg) {
    if (check_ready(g) < 0) return NULL;
    Py_buffer out;
    if (get_required(g, arg, sizeof(int64_t), g->n, "out", 1, &out) < 0) return NULL;
    int64_t *a = out.buf;
    for (Py_ssize_t i = 0; i < g->n; i++)
        a[i] = g->done[i] ? -1 : jh_random_legal(jh_legal_mask(&g->games[i]), &g->play_rng[i]);
    release_input(&out);
    Py_RETURN_NONE;
}

/* play_random(seat int8 (N,)): in every game still going, the player seat[i]
 * plays uniformly random legal actions for as long as it is to act. */
static PyObject *games_play_random(Games *g, PyObject *arg) {
    if (check_ready(g) < 0) return NULL;
    Py_buffer seat_buf;
    if (get_required(g, arg, 1, g->n, "seat", 0, &seat_buf) < 0) return NULL;
    const int8_t *seat = seat_buf.buf;
    for (Py_ssize_t i = 0; i < g->n; i++) {
        State *s = &g->games[i];
        if (g->done[i] || s->to_act != seat[i]) continue;
        g->rewards[2 * i] = g->rewards[2 * i + 1] = 0.0f;    /* only the games it moves */
        while (!g->done[i] && s->to_act == seat[i])
            apply_legal(g, i, random_legal(g, i, jh_legal_mask(s)));
        write_row(g, i);
    }
    release_input(&seat_buf);
    Py_RETURN_NONE;
}

/* observe(players int8 (N,), obs_out int8 (N, 327), mask_out int8 (N, 28),
 * where uint8 (N,) or None): the observation and action mask of game i for
 * players[i] (0 Jekyll, 1 Hyde), for every selected game. */
static PyObject *games_observe(Games *g, PyObject *args) {
    PyObject *players_obj, *obs_obj, *mask_obj, *where_obj;
    if (check_ready(g) < 0 ||
        !PyArg_ParseTuple(args, "OOOO", &players_obj, &obs_obj, &mask_obj, &where_obj))
        return NULL;
    Py_buffer players, obs, mask, where;
    if (get_required(g, players_obj, 1, g->n, "players", 0, &players) < 0) return NULL;
    if (get_required(g, obs_obj, JH_OBS_SIZE, g->n, "obs_out", 1, &obs) < 0) {
        release_input(&players);
        return NULL;
    }
    if (get_required(g, mask_obj, JH_NUM_ACTIONS, g->n, "mask_out", 1, &mask) < 0) {
        release_input(&players); release_input(&obs);
        return NULL;
    }
    if (get_input(g, where_obj, 1, g->n, "where", &where) < 0) {
        release_input(&players); release_input(&obs); release_input(&mask);
        return NULL;
    }
    PyObject *result = Py_None;
    const int8_t *p = players.buf;
    const uint8_t *w = where.buf;
    for (Py_ssize_t i = 0; result != NULL && i < g->n; i++) {
        if (w && !w[i]) continue;
        if (p[i] != 0 && p[i] != 1) {
            PyErr_Format(PyExc_ValueError, "players[%zd] is %d; players are 0 (jekyll) or 1 (hyde)",
                         i, (int)p[i]);
            result = NULL;
            break;
        }
        const State *s = &g->games[i];
        jh_encode(s, p[i], (int8_t *)obs.buf + i * JH_OBS_SIZE);
        jh_write_mask(s, g->done[i] ? -1 : p[i], (int8_t *)mask.buf + i * JH_NUM_ACTIONS);
    }
    release_input(&players); release_input(&obs); release_input(&mask); release_input(&where);
    if (result == NULL) return NULL;
    Py_RETURN_NONE;
}

/* draw(bound, where uint8 (N,) or None, out int64 (N,)): a uniform integer in
 * [0, bound) from each selected game's own stream. */
static PyObject *games_draw(Games *g, PyObject *args) {
    int bound;
    PyObject *where_obj, *out_obj;
    if (check_ready(g) < 0 || !PyArg_ParseTuple(args, "iOO", &bound, &where_obj, &out_obj))
        return NULL;
    if (bound < 1) {
        PyErr_Format(PyExc_ValueError, "bound must be >= 1, got %d", bound);
        return NULL;
    }
    Py_buffer where, out;
    if (get_input(g, where_obj, 1, g->n, "where", &where) < 0) return NULL;
    if (get_required(g, out_obj, sizeof(int64_t), g->n, "out", 1, &out) < 0) {
        release_input(&where);
        return NULL;
    }
    const uint8_t *w = where.buf;
    int64_t *o = out.buf;
    for (Py_ssize_t i = 0; i < g->n; i++)
        if (w == NULL || w[i]) o[i] = jh_below(&g->draw_rng[i], bound);
    release_input(&where);
    release_input(&out);
    Py_RETURN_NONE;
}

/* The game index a method of one game is given: checked to be 0 to n - 1 once the
   games are reset; -1 with the error set otherwise. */
static Py_ssize_t game_index(Games *g, PyObject *arg) {
    if (check_ready(g) < 0) return -1;
    Py_ssize_t i = PyLong_AsSsize_t(arg);
    if (i == -1 && PyErr_Occurred()) return -1;
    if (i < 0 || i >= g->n) {
        PyErr_Format(PyExc_IndexError, "game index %zd out of range 0-%zd", i, g->n - 1);
        return -1;
    }
    return i;
}

/* state(i) -> game i's state as a core tuple (jh_pystate.h). */
static PyObject *games_state(Games *g, PyObject *arg) {
    Py_ssize_t i = game_index(g, arg);
    if (i < 0) return NULL;
    return jh_pack_state(&g->games[i]);
}

/* history(i) -> game i's actions so far as bytes, or None past LOG_CAPACITY. */
static PyObject *games_history(Games *g, PyObject *arg) {
    Py_ssize_t i = game_index(g, arg);
    if (i < 0) return NULL;
    if (g->log_len[i] >= LOG_CAPACITY) Py_RETURN_NONE;
    return PyBytes_FromStringAndSize((const char *)g->log + i * LOG_CAPACITY, g->log_len[i]);
}

/* legal_mask(i) -> game i's legal actions as a bit mask (0 once over). */
static PyObject *games_legal_mask(Games *g, PyObject *arg) {
    Py_ssize_t i = game_index(g, arg);
    if (i < 0) return NULL;
    return PyLong_FromUnsignedLong(g->done[i] ? 0 : jh_legal_mask(&g->games[i]));
}

static PyMethodDef games_methods[] = {
    {"reset", (PyCFunction)games_reset, METH_VARARGS,
     "reset(seed, first_game, fixed_deals or None, fixed_rounds or None): new games."},
    {"reset_where", (PyCFunction)games_reset_where, METH_O,
     "reset_where(where or None): a new episode for the selected games."},
    {"seed_numpy", (PyCFunction)games_seed_numpy, METH_VARARGS,
     "seed_numpy(words, k, counts, where): numpy streams of the selected games."},
    {"new_episodes", (PyCFunction)games_new_episodes, METH_VARARGS,
     "new_episodes(where, flags, fixed, rounds, seats): new episodes with their draws."},
    {"history", (PyCFunction)games_history, METH_O,
     "history(i) -> game i's actions so far (bytes), None if too many."},
    {"step", (PyCFunction)games_step, METH_VARARGS,
     "step(actions, where or None) -> -1, or the index of the first illegal action."},
    {"sample", (PyCFunction)games_sample, METH_O,
     "sample(out): a random legal action per game (-1 where over)."},
    {"play_random", (PyCFunction)games_play_random, METH_O,
     "play_random(seat): seat[i] plays random legal actions while it is to act."},
    {"observe", (PyCFunction)games_observe, METH_VARARGS,
     "observe(players, obs_out, mask_out, where): game i's observation for players[i]."},
    {"draw", (PyCFunction)games_draw, METH_VARARGS,
     "draw(bound, where or None, out): a uniform integer below bound per selected game."},
    {"state", (PyCFunction)games_state, METH_O, "state(i) -> game i as a core tuple."},
    {"legal_mask", (PyCFunction)games_legal_mask, METH_O,
     "legal_mask(i) -> game i's legal action bits."},
    {NULL, NULL, 0, NULL}};

static PyTypeObject GamesType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "jekyll_hyde_env.core._core.Games",
    .tp_basicsize = sizeof(Games),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "N games of Jekyll vs Hyde writing into caller-owned buffers "
              "(see jekyll_hyde_env.vector).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)games_init,
    .tp_dealloc = (destructor)games_dealloc,
    .tp_methods = games_methods,
};

/* --- module functions ------------------------------------------------------- */

static PyObject *py_layout(PyObject *self, PyObject *unused) {
    PyObject *out = PyTuple_New(JH_LAYOUT_PIECES);
    if (out == NULL) return NULL;
    for (int k = 0; k < JH_LAYOUT_PIECES; k++) {
        PyObject *item = Py_BuildValue("(si)", JH_LAYOUT[k].name, JH_LAYOUT[k].size);
        if (item == NULL) { Py_DECREF(out); return NULL; }
        PyTuple_SET_ITEM(out, k, item);
    }
    return out;
}

/* encode(state tuple, player) -> bytes: the observation of one core state. */
static PyObject *py_encode(PyObject *self, PyObject *args) {
    PyObject *t; int player; State s; JhVariant s_variant;
    if (!PyArg_ParseTuple(args, "Oi", &t, &player) || jh_unpack_state(t, &s, &s_variant) < 0) return NULL;
    if (player != 0 && player != 1) {
        PyErr_Format(PyExc_ValueError, "player must be 0 or 1, got %d", player);
        return NULL;
    }
    int8_t obs[JH_OBS_SIZE];
    jh_encode(&s, player, obs);
    return PyBytes_FromStringAndSize((const char *)obs, JH_OBS_SIZE);
}

static PyMethodDef module_methods[] = {
    {"layout", py_layout, METH_NOARGS, "layout() -> the observation pieces as (name, size)."},
    {"encode", py_encode, METH_VARARGS,
     "encode(state, player) -> the observation bytes of a core state."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_core",
    "The batched C games of jekyll_hyde_env.vector, on the rules of jh_rules.h.", -1,
    module_methods};

PyMODINIT_FUNC PyInit__core(void) {
    jh_observe_init();
    if (PyType_Ready(&GamesType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    Py_INCREF(&GamesType);
    if (PyModule_AddObject(m, "Games", (PyObject *)&GamesType) < 0) {
        Py_DECREF(&GamesType);
        Py_DECREF(m);
        return NULL;
    }
    PyModule_AddIntConstant(m, "OBS_SIZE", JH_OBS_SIZE);
    PyModule_AddIntConstant(m, "STATE_FIELDS", JH_STATE_FIELDS);
    return m;
}

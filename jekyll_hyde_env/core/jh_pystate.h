/*
 * A State of jh_rules.h as a Python tuple of ints, and back.
 *
 * The tuple is the form in which a state crosses between Python and C (made
 * from a GameState by agents.rollout.to_core, and compared with it by the
 * differential tests). Its JH_STATE_FIELDS fields, in order: round, marker,
 * phase, to_act, leader, hand0, hand1, picks0, picks1, picks_left0,
 * picks_left1, potion_rule0, potion_rule1, lead_card, declared, ranks
 * (packed), tricks0, tricks1, the six deal masks (round 1 Jekyll, round 1
 * Hyde, ...), winner, played0, played1, exch_given0, exch_given1,
 * swap_given0, swap_given1, void0, void1, tricks_played.
 * Packed ranks: count * 64 + r0 + 4 * r1 + 16 * r2, weakest first.
 */
#ifndef JH_PYSTATE_H
#define JH_PYSTATE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "jh_rules.h"

#define JH_STATE_FIELDS 34

/* Reads a tuple of exactly n ints into v; `what` names it in the error. */
static int jh_read_ints(PyObject *t, int n, long *v, const char *what) {
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

static inline long jh_pack_ranks(const State *s) {
    long r = (long)s->nranks << 6;
    for (int i = 0; i < s->nranks; i++) r |= (long)s->ranks[i] << (2 * i);
    return r;
}

static inline void jh_unpack_ranks(State *s, long r) {
    s->nranks = (int)(r >> 6);
    for (int i = 0; i < 3; i++) s->ranks[i] = (int)((r >> (2 * i)) & 3);
}

static inline int jh_in(long v, long lo, long hi) { return lo <= v && v <= hi; }

/* Every field within the range the rules give it: the C code indexes arrays with
 * them (the observation's one-hot pieces, the players), so a tuple from Python
 * is checked before any use. */
static int jh_state_in_range(const State *s) {
    uint32_t masks = s->hands[0] | s->hands[1] | s->picks[0] | s->picks[1] | s->played[0] |
                     s->played[1] | s->exch_given[0] | s->exch_given[1] | s->swap_given[0] |
                     s->swap_given[1];
    for (int r = 0; r < JH_MAX_ROUNDS; r++) masks |= s->deals[r][0] | s->deals[r][1];
    int over = s->phase == JH_GAME_OVER;
    int ok = jh_in(s->round, 1, JH_MAX_ROUNDS) && jh_in(s->phase, 0, JH_GAME_OVER) &&
             jh_in(s->marker, 0, JH_TRACK_END) && (masks & ~JH_ALL_CARDS) == 0 &&
             (over ? s->to_act == -1 : jh_in(s->to_act, 0, 1)) && jh_in(s->leader, 0, 1) &&
             jh_in(s->lead_card, -1, JH_NUM_CARDS - 1) && jh_in(s->declared, -1, 2) &&
             jh_in(s->nranks, 0, 3) && jh_in(s->winner, -1, 1) &&
             jh_in(s->tricks_played, 0, over ? JH_HAND_SIZE : JH_HAND_SIZE - 1) &&
             (s->void_colours[0] | s->void_colours[1]) < 8;
    for (int p = 0; p < 2 && ok; p++)
        ok = jh_in(s->picks_left[p], 0, JH_MAX_ROUNDS) && jh_in(s->tricks[p], 0, JH_HAND_SIZE) &&
             jh_in(s->potion_rule[p], 0, 1);
    for (int i = 0; i < s->nranks && ok; i++) ok = jh_in(s->ranks[i], 0, 2);
    return ok;
}

static int jh_unpack_state(PyObject *t, State *s) {
    long v[JH_STATE_FIELDS];
    if (jh_read_ints(t, JH_STATE_FIELDS, v, "a core state") < 0) return -1;
    s->round = v[0]; s->marker = v[1]; s->phase = v[2]; s->to_act = v[3]; s->leader = v[4];
    s->hands[0] = v[5]; s->hands[1] = v[6]; s->picks[0] = v[7]; s->picks[1] = v[8];
    s->picks_left[0] = v[9]; s->picks_left[1] = v[10];
    s->potion_rule[0] = v[11]; s->potion_rule[1] = v[12];
    s->lead_card = v[13]; s->declared = v[14];
    jh_unpack_ranks(s, v[15]);
    s->tricks[0] = v[16]; s->tricks[1] = v[17];
    for (int i = 0; i < 3; i++) { s->deals[i][0] = v[18 + 2 * i]; s->deals[i][1] = v[19 + 2 * i]; }
    s->winner = v[24];
    s->played[0] = v[25]; s->played[1] = v[26];
    s->exch_given[0] = v[27]; s->exch_given[1] = v[28];
    s->swap_given[0] = v[29]; s->swap_given[1] = v[30];
    s->void_colours[0] = v[31]; s->void_colours[1] = v[32];
    s->tricks_played = v[33];
    if (!jh_state_in_range(s)) {
        PyErr_SetString(PyExc_ValueError, "core state out of range");
        return -1;
    }
    return 0;
}

static PyObject *jh_pack_state(const State *s) {
    return Py_BuildValue(
        "(iiiiikkkkiiiiiiliikkkkkkikkkkkkkki)", s->round, s->marker, s->phase, s->to_act,
        s->leader, (unsigned long)s->hands[0], (unsigned long)s->hands[1],
        (unsigned long)s->picks[0], (unsigned long)s->picks[1], s->picks_left[0],
        s->picks_left[1], s->potion_rule[0], s->potion_rule[1], s->lead_card, s->declared,
        jh_pack_ranks(s), s->tricks[0], s->tricks[1], (unsigned long)s->deals[0][0],
        (unsigned long)s->deals[0][1], (unsigned long)s->deals[1][0],
        (unsigned long)s->deals[1][1], (unsigned long)s->deals[2][0],
        (unsigned long)s->deals[2][1], s->winner, (unsigned long)s->played[0],
        (unsigned long)s->played[1], (unsigned long)s->exch_given[0],
        (unsigned long)s->exch_given[1], (unsigned long)s->swap_given[0],
        (unsigned long)s->swap_given[1], (unsigned long)s->void_colours[0],
        (unsigned long)s->void_colours[1], s->tricks_played);
}

#endif /* JH_PYSTATE_H */

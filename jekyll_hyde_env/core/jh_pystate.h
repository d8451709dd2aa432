/*
 * A State of jh_rules.h as a Python tuple of ints, and back.
 *
 * The tuple is the form in which a state crosses between Python and C (made
 * from a GameState by jekyll_hyde_agents.rollout.to_core, and compared with it by the
 * differential tests). Its JH_STATE_FIELDS fields, in order: round, marker,
 * phase, to_act, leader, hand0, hand1, picks0, picks1, picks_left0,
 * picks_left1, potion_rule0, potion_rule1, lead_card, declared, ranks
 * (packed), tricks0, tricks1, the six deal masks (round 1 Jekyll, round 1
 * Hyde, ...), winner, played0, played1, exch_given0, exch_given1,
 * swap_given0, swap_given1, void0, void1, tricks_played.
 * Ranks are packed as jh_pack_ranks (jh_rules.h) says.
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

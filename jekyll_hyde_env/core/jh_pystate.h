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
 * Ranks are packed as jh_pack_ranks (jh_rules.h) says. A state of a smaller
 * variant (RULES.md V1-V7) has JH_VARIANT_FIELDS more at the end, the variant's
 * (engine.variant.Variant.core_fields); a state of the full game has none.
 */
#ifndef JH_PYSTATE_H
#define JH_PYSTATE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "jh_rules.h"

#define JH_STATE_FIELDS 34

/* Reads a tuple of exactly n ints into v; `what` names it in the error. */
static inline int jh_read_ints(PyObject *t, int n, long *v, const char *what) {
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

/* Reads a tuple of `n` ints into v, which may end with a variant's JH_VARIANT_FIELDS
 * more (engine.variant.Variant.core_fields) read into *variant; *game is then variant,
 * or NULL for the full game. Returns 0, or -1 with a Python error naming `what`. */
static int jh_read_fields(PyObject *t, int n, long *v, JhVariant *variant,
                          const JhVariant **game, const char *what) {
    *game = NULL;
    Py_ssize_t size = PyTuple_Check(t) ? PyTuple_GET_SIZE(t) : -1;
    if (size != n && size != n + JH_VARIANT_FIELDS) {
        PyErr_Format(PyExc_TypeError, "%s is a tuple of %d ints, or %d with its variant", what,
                     n, n + JH_VARIANT_FIELDS);
        return -1;
    }
    long f[JH_VARIANT_FIELDS];
    for (Py_ssize_t i = 0; i < size; i++) {
        long value = PyLong_AsLong(PyTuple_GET_ITEM(t, i));
        if (value == -1 && PyErr_Occurred()) return -1;
        if (i < n) v[i] = value; else f[i - n] = value;
    }
    if (size == n) return 0;
    if (jh_variant_from_fields(f, variant) < 0) {
        PyErr_Format(PyExc_ValueError, "%s names an impossible variant", what);
        return -1;
    }
    *game = variant;
    return 0;
}

/* A tuple of the n ints of v, then the variant's fields unless `game` is NULL. */
static PyObject *jh_build_fields(const long *v, int n, const JhVariant *game) {
    long f[JH_VARIANT_FIELDS] = {0};
    if (game != NULL) jh_variant_fields(game, f);
    int size = n + (game != NULL ? JH_VARIANT_FIELDS : 0);
    PyObject *t = PyTuple_New(size);
    for (int i = 0; i < size && t != NULL; i++) {
        PyObject *item = PyLong_FromLong(i < n ? v[i] : f[i - n]);
        if (item == NULL) { Py_CLEAR(t); break; }
        PyTuple_SET_ITEM(t, i, item);
    }
    return t;
}

/* Reads a core state into s; a variant's fields go to *variant, which must outlive s. */
static int jh_unpack_state(PyObject *t, State *s, JhVariant *variant) {
    long v[JH_STATE_FIELDS];
    const JhVariant *game;
    if (jh_read_fields(t, JH_STATE_FIELDS, v, variant, &game, "a core state") < 0) return -1;
    s->variant = game;
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

static PyObject *jh_pack_state_fields(const State *s) {
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

/* The state as a tuple: its fields, then its variant's unless it is the full game. */
static PyObject *jh_pack_state(const State *s) {
    PyObject *fields = jh_pack_state_fields(s);
    if (fields == NULL || s->variant == NULL) return fields;
    PyObject *tail = jh_build_fields(NULL, 0, s->variant);
    if (tail == NULL) { Py_DECREF(fields); return NULL; }
    PyObject *all = PySequence_Concat(fields, tail);
    Py_DECREF(fields); Py_DECREF(tail);
    return all;
}

#endif /* JH_PYSTATE_H */

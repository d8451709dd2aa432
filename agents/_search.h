/*
 * What every search of agents/_rollout.c shares: short names for the rules
 * core's constants, the clock that bounds a search's time, and the longest
 * game.
 */
#ifndef AGENTS_SEARCH_H
#define AGENTS_SEARCH_H

#include <time.h>

#include "jh_rules.h"

enum { EXCHANGE = JH_EXCHANGE, DECLARE = JH_DECLARE, FOLLOW = JH_FOLLOW, SWAP = JH_SWAP,
       GAME_OVER = JH_GAME_OVER };
enum { NUM_ACTIONS = JH_NUM_ACTIONS, MAX_ROUNDS = JH_MAX_ROUNDS, TRACK_END = JH_TRACK_END };
#define POTIONS JH_POTIONS
#define ALL_CARDS JH_ALL_CARDS

static double seconds_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define MAX_DEPTH 512   /* decisions in a game: at most 76 a round */

#endif /* AGENTS_SEARCH_H */

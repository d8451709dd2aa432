/*
 * A saved policy's network in C: the forward pass that network-guided search
 * runs at every node it adds.
 *
 * The layers are those of agents/policy_file.py: hidden layers (tanh or relu),
 * then the 28 action logits; a value head, when the file has one, reads the
 * last hidden layer and gives tanh(v . h + b), the expected outcome (+1 win,
 * -1 loss) of the player whose observation went in. Every layer is kept
 * transposed (in x out) and applied as a sum of rows, one per non-zero input:
 * an observation has about 40 of its 327 entries set and a relu layer many
 * zeros, and the row additions vectorise without reordering any sum.
 *
 * The rows are added four at a time (net_add_rows): each output element is
 * loaded and stored once per four rows instead of once per row, and the
 * additions still happen in row order, so every result is the same as one row
 * at a time. A 512-wide network's weights do not fit a core's L2 cache, so the
 * search spends most of its time here. With GCC on x86-64 Linux, net_forward
 * is compiled for AVX-512, AVX2 and plain x86-64, chosen when the module
 * loads; with contraction to fused multiply-adds off (-ffp-contract=off in
 * pyproject.toml) all three give the same bits.
 * tests/test_az.py holds this forward pass to agents.PolicyAgent (numpy).
 */
#ifndef AGENTS_NET_H
#define AGENTS_NET_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jh_observe.h"

#define NET_MAX_LAYERS 8
#define NET_MAX_WIDTH 4096
/* net_forward lists the first layer's non-zero inputs in arrays of this size. */
_Static_assert(JH_OBS_SIZE <= NET_MAX_WIDTH, "the observation must fit NET_MAX_WIDTH");

typedef struct {
    int nlayers;                    /* hidden layers + the output layer */
    int sizes[NET_MAX_LAYERS + 1];  /* sizes[0]: observation; sizes[k]: layer k-1's outputs */
    float *w[NET_MAX_LAYERS];       /* layer k transposed: sizes[k] rows of sizes[k+1] */
    float *b[NET_MAX_LAYERS];
    float *vw;                      /* value head weights (last hidden size), or NULL */
    float vb;
    int relu;
} Net;

static void net_free(Net *net) {
    if (net == NULL) return;
    for (int k = 0; k < net->nlayers; k++) { free(net->w[k]); free(net->b[k]); }
    free(net->vw);
    free(net);
}

static inline float net_activate(const Net *net, float x) {
    return net->relu ? (x > 0.0f ? x : 0.0f) : tanhf(x);
}

/* dest[j] += sum over k of coef[k] * rows[k][j] (coef NULL: every coefficient 1),
 * k in order, for the n rows listed in rows. */
static inline void net_add_rows(float *dest, int out, const float *const *rows,
                                const float *coef, int n) {
    int k = 0;
    for (; k + 4 <= n; k += 4) {
        const float *r0 = rows[k], *r1 = rows[k + 1], *r2 = rows[k + 2], *r3 = rows[k + 3];
        if (coef == NULL) {
            for (int j = 0; j < out; j++) dest[j] = dest[j] + r0[j] + r1[j] + r2[j] + r3[j];
        } else {
            float c0 = coef[k], c1 = coef[k + 1], c2 = coef[k + 2], c3 = coef[k + 3];
            for (int j = 0; j < out; j++)
                dest[j] = dest[j] + c0 * r0[j] + c1 * r1[j] + c2 * r2[j] + c3 * r3[j];
        }
    }
    for (; k < n; k++) {
        const float *r = rows[k];
        if (coef == NULL) for (int j = 0; j < out; j++) dest[j] = dest[j] + r[j];
        else for (int j = 0; j < out; j++) dest[j] = dest[j] + coef[k] * r[j];
    }
}

/* Versions for wider vector units, where the compiler and the loader can pick
 * one at load time (GCC on x86-64 Linux); elsewhere one plain build. */
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__clang__)
#define NET_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define NET_CLONES
#endif

/* logits[28] and *value (0 when the net has no value head) for one observation. */
NET_CLONES
static void net_forward(const Net *net, const int8_t *obs, float *logits, float *value) {
    float a[NET_MAX_WIDTH], b[NET_MAX_WIDTH], coef[NET_MAX_WIDTH];
    const float *rows[NET_MAX_WIDTH];
    int out = net->sizes[1], n = 0;
    memcpy(a, net->b[0], sizeof(float) * (size_t)out);
    for (int i = 0; i < net->sizes[0]; i++)
        if (obs[i]) rows[n++] = net->w[0] + (size_t)i * out;
    net_add_rows(a, out, rows, NULL, n);
    if (net->nlayers == 1) {        /* no hidden layer: the first layer gives the logits */
        memcpy(logits, a, sizeof(float) * JH_NUM_ACTIONS);
        *value = 0.0f;
        return;
    }
    float *x = a, *y = b;
    for (int k = 1; k < net->nlayers; k++) {
        for (int j = 0; j < out; j++) x[j] = net_activate(net, x[j]);
        int in = out;
        out = net->sizes[k + 1];
        const float *w = net->w[k];
        float *dest = k == net->nlayers - 1 ? logits : y;
        memcpy(dest, net->b[k], sizeof(float) * (size_t)out);
        n = 0;
        for (int i = 0; i < in; i++) {  /* list the non-zero inputs, without a branch to mispredict */
            coef[n] = x[i];
            rows[n] = w + (size_t)i * out;
            n += x[i] != 0.0f;
        }
        net_add_rows(dest, out, rows, coef, n);
        if (k < net->nlayers - 1) { float *t = x; x = y; y = t; }
    }
    *value = 0.0f;
    if (net->vw != NULL) {          /* x holds the last hidden layer, activated */
        int hidden = net->sizes[net->nlayers - 1];
        float sum = net->vb;
        for (int i = 0; i < hidden; i++) sum += net->vw[i] * x[i];
        *value = tanhf(sum);
    }
}

#endif /* AGENTS_NET_H */

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

/* logits[28] and *value (0 when the net has no value head) for one observation. */
static void net_forward(const Net *net, const int8_t *obs, float *logits, float *value) {
    float a[NET_MAX_WIDTH], b[NET_MAX_WIDTH];
    int out = net->sizes[1];
    memcpy(a, net->b[0], sizeof(float) * (size_t)out);
    for (int i = 0; i < net->sizes[0]; i++) {
        if (!obs[i]) continue;
        const float *row = net->w[0] + (size_t)i * out;
        for (int j = 0; j < out; j++) a[j] += row[j];
    }
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
        for (int i = 0; i < in; i++) {
            float xi = x[i];
            if (xi == 0.0f) continue;
            const float *row = w + (size_t)i * out;
            for (int j = 0; j < out; j++) dest[j] += xi * row[j];
        }
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

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
 * Each row is padded with zeros to a whole number of NET_LANES floats and
 * starts on a 64-byte boundary, so the additions run in whole vectors. The
 * value head is the output layer's column 28 (its bias the head's bias): one
 * pass over the last hidden layer gives the logits and the value together.
 * The sums are accumulated in registers, NET_BLOCK vectors of outputs at a
 * time over all the rows, so each output is loaded and stored once per layer;
 * the rows are still added one by one in row order, so every result has the
 * same bits as adding the rows one at a time into memory. With GCC on x86-64
 * Linux, net_forward is compiled for AVX-512, AVX2 and plain x86-64, chosen
 * when the module loads; with contraction to fused multiply-adds off
 * (-ffp-contract=off in pyproject.toml) all three give the same bits.
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
#define NET_LANES 16                /* floats in one vector of the additions */
#define NET_BLOCK 4                 /* vectors of outputs accumulated at once */
#define NET_VALUE_COLUMN JH_NUM_ACTIONS
/* net_forward lists the first layer's non-zero inputs in arrays of this size. */
_Static_assert(JH_OBS_SIZE <= NET_MAX_WIDTH, "the observation must fit NET_MAX_WIDTH");
_Static_assert(NET_MAX_WIDTH % NET_LANES == 0, "NET_MAX_WIDTH must be whole vectors");

typedef struct {
    int nlayers;                    /* hidden layers + the output layer */
    int sizes[NET_MAX_LAYERS + 1];  /* sizes[0]: observation; sizes[k]: layer k-1's outputs */
    int stride[NET_MAX_LAYERS];     /* floats in a row of layer k: its outputs, padded */
    float *w[NET_MAX_LAYERS];       /* layer k transposed: sizes[k] rows of stride[k] */
    float *b[NET_MAX_LAYERS];       /* stride[k] biases, zero-padded */
    int has_value;                  /* the output layer's column 28 is a value head */
    int relu;
} Net;

typedef float NetVector __attribute__((vector_size(NET_LANES * sizeof(float))));

static int net_padded(int n) { return (n + NET_LANES - 1) / NET_LANES * NET_LANES; }

/* Zeroed floats on a 64-byte boundary, or NULL. */
static float *net_floats(size_t n) {
    size_t bytes = (sizeof(float) * n + 63) / 64 * 64;
    float *p = aligned_alloc(64, bytes > 0 ? bytes : 64);
    if (p != NULL) memset(p, 0, bytes);
    return p;
}

static void net_free(Net *net) {
    if (net == NULL) return;
    for (int k = 0; k < net->nlayers; k++) { free(net->w[k]); free(net->b[k]); }
    free(net);
}

/* An empty network (relu or tanh hidden layers), or NULL when memory ran out. */
static Net *net_new(int relu) {
    Net *net = calloc(1, sizeof(Net));
    if (net == NULL) return NULL;
    net->relu = relu;
    net->sizes[0] = JH_OBS_SIZE;
    return net;
}

/* Sets layer k (the next one: k == nlayers) from `weight` (out x in, row-major)
 * and `bias` (out), `in` being the previous layer's outputs. The output layer
 * (out 28) gets one column more, for the value head. Returns 0, or -1 when
 * memory ran out. The caller checks the shapes. */
static int net_add_layer(Net *net, const float *weight, const float *bias, int out, int in) {
    int k = net->nlayers;
    int stride = net_padded(out == JH_NUM_ACTIONS ? out + 1 : out);
    float *w = net_floats((size_t)in * stride), *b = net_floats(stride);
    if (w == NULL || b == NULL) { free(w); free(b); return -1; }
    for (int r = 0; r < out; r++)
        for (int c = 0; c < in; c++) w[(size_t)c * stride + r] = weight[(size_t)r * in + c];
    memcpy(b, bias, sizeof(float) * (size_t)out);
    net->w[k] = w;
    net->b[k] = b;
    net->stride[k] = stride;
    net->sizes[k + 1] = out;
    net->nlayers = k + 1;
    return 0;
}

/* Sets the value head (`weight`: the last hidden layer's size) once every
 * layer is set and there is at least one hidden layer. */
static void net_set_value(Net *net, const float *weight, float bias) {
    int last = net->nlayers - 1, stride = net->stride[last];
    for (int i = 0; i < net->sizes[last]; i++)
        net->w[last][(size_t)i * stride + NET_VALUE_COLUMN] = weight[i];
    net->b[last][NET_VALUE_COLUMN] = bias;
    net->has_value = 1;
}

static inline float net_activate(const Net *net, float x) {
    return net->relu ? (x > 0.0f ? x : 0.0f) : tanhf(x);
}

/* The vector of NET_LANES floats at p (64-byte aligned). */
#define NET_LOAD(p) (*(const NetVector *)(p))

/* dest[j] = bias[j] + sum over k of coef[k] * rows[k][j] (coef NULL: every
 * coefficient 1), k in order, for the n rows listed in rows and the `nv`
 * vectors of outputs from j on (every pointer 64-byte aligned). */
__attribute__((always_inline))
static inline void net_sum_block(float *dest, const float *bias, int j, int nv,
                                 const float *const *rows, const float *coef, int n) {
    NetVector acc[NET_BLOCK];
    for (int v = 0; v < nv; v++) acc[v] = NET_LOAD(bias + j + v * NET_LANES);
    for (int k = 0; k < n; k++) {
        const float *r = rows[k] + j;
        if (coef == NULL) {
            for (int v = 0; v < nv; v++) acc[v] = acc[v] + NET_LOAD(r + v * NET_LANES);
        } else {
            float c = coef[k];
            for (int v = 0; v < nv; v++) acc[v] = acc[v] + c * NET_LOAD(r + v * NET_LANES);
        }
    }
    for (int v = 0; v < nv; v++) *(NetVector *)(dest + j + v * NET_LANES) = acc[v];
}

/* net_sum_block over all `stride` outputs (a whole number of vectors): blocks
 * of NET_BLOCK vectors, then one block of what is left, each with a constant
 * count of vectors so that the accumulators stay in registers. */
__attribute__((always_inline))
static inline void net_sum_rows(float *dest, const float *bias, int stride,
                                const float *const *rows, const float *coef, int n) {
    int j = 0;
    for (; j + NET_BLOCK * NET_LANES <= stride; j += NET_BLOCK * NET_LANES)
        net_sum_block(dest, bias, j, NET_BLOCK, rows, coef, n);
    switch ((stride - j) / NET_LANES) {
    case 3: net_sum_block(dest, bias, j, 3, rows, coef, n); break;
    case 2: net_sum_block(dest, bias, j, 2, rows, coef, n); break;
    case 1: net_sum_block(dest, bias, j, 1, rows, coef, n); break;
    default: break;
    }
}

_Static_assert(NET_BLOCK == 4, "net_sum_rows lists the remainders of a block of 4");

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
    _Alignas(64) float a[NET_MAX_WIDTH], b[NET_MAX_WIDTH];
    float coef[NET_MAX_WIDTH];
    const float *rows[NET_MAX_WIDTH];
    int n = 0, stride = net->stride[0];
    for (int i = 0; i < net->sizes[0]; i++) {  /* the set inputs, without a branch to mispredict */
        rows[n] = net->w[0] + (size_t)i * stride;
        n += obs[i] != 0;
    }
    net_sum_rows(a, net->b[0], stride, rows, NULL, n);
    float *x = a, *y = b;
    for (int k = 1; k < net->nlayers; k++) {
        int in = net->sizes[k];
        /* Activation in a pass of its own, which vectorises: folded into the
         * listing below it made the whole forward pass about 1.6 times slower. */
        for (int j = 0; j < in; j++) x[j] = net_activate(net, x[j]);
        stride = net->stride[k];
        n = 0;
        for (int i = 0; i < in; i++) {  /* the non-zero inputs, without a branch */
            coef[n] = x[i];
            rows[n] = net->w[k] + (size_t)i * stride;
            n += x[i] != 0.0f;
        }
        net_sum_rows(y, net->b[k], stride, rows, coef, n);
        float *t = x; x = y; y = t;
    }
    memcpy(logits, x, sizeof(float) * JH_NUM_ACTIONS);
    /* The value needs a hidden layer; an output layer reading the observation
     * itself has nothing in its value column. */
    *value = net->has_value && net->nlayers > 1 ? tanhf(x[NET_VALUE_COLUMN]) : 0.0f;
}

#endif /* AGENTS_NET_H */

/* ANeuralNetworksExecution_compute from C: one reusable execution of a tiny
 * model (ADD of two 2x2 float32 tensors), bound once, computed RUNS times per
 * repeat; prints the median of the repeats' median latencies in microseconds. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "NeuralNetworks.h"

#define CHECK(x) do { int r_ = (x); if (r_ != ANEURALNETWORKS_NO_ERROR) { \
    fprintf(stderr, "%s = %d\n", #x, r_); exit(1); } } while (0)

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    int runs = argc > 1 ? atoi(argv[1]) : 2000, repeats = argc > 2 ? atoi(argv[2]) : 5;
    uint32_t dims[2] = {2, 2}, in[3] = {0, 1, 2}, out[1] = {3};
    ANeuralNetworksOperandType t = {ANEURALNETWORKS_TENSOR_FLOAT32, 2, dims, 0.0f, 0};
    ANeuralNetworksOperandType s = {ANEURALNETWORKS_INT32, 0, NULL, 0.0f, 0};
    int32_t act = ANEURALNETWORKS_FUSED_NONE;
    ANeuralNetworksModel *m;
    CHECK(ANeuralNetworksModel_create(&m));
    CHECK(ANeuralNetworksModel_addOperand(m, &t));
    CHECK(ANeuralNetworksModel_addOperand(m, &t));
    CHECK(ANeuralNetworksModel_addOperand(m, &s));
    CHECK(ANeuralNetworksModel_addOperand(m, &t));
    CHECK(ANeuralNetworksModel_setOperandValue(m, 2, &act, sizeof act));
    CHECK(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_ADD, 3, in, 1, out));
    CHECK(ANeuralNetworksModel_identifyInputsAndOutputs(m, 2, in, 1, out));
    CHECK(ANeuralNetworksModel_finish(m));
    ANeuralNetworksCompilation *c;
    CHECK(ANeuralNetworksCompilation_create(m, &c));
    CHECK(ANeuralNetworksCompilation_finish(c));
    ANeuralNetworksExecution *e;
    float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40}, y[4];
    CHECK(ANeuralNetworksExecution_create(c, &e));
    CHECK(ANeuralNetworksExecution_setReusable(e, true));
    CHECK(ANeuralNetworksExecution_setInput(e, 0, NULL, a, sizeof a));
    CHECK(ANeuralNetworksExecution_setInput(e, 1, NULL, b, sizeof b));
    CHECK(ANeuralNetworksExecution_setOutput(e, 0, NULL, y, sizeof y));
    for (int i = 0; i < 100; i++) CHECK(ANeuralNetworksExecution_compute(e)); /* warm up */
    double *lat = malloc(sizeof *lat * runs), *med = malloc(sizeof *med * repeats);
    for (int r = 0; r < repeats; r++) {
        for (int i = 0; i < runs; i++) {
            double t0 = now_ns();
            CHECK(ANeuralNetworksExecution_compute(e));
            lat[i] = now_ns() - t0;
        }
        qsort(lat, runs, sizeof *lat, cmp);
        med[r] = lat[runs / 2];
    }
    qsort(med, repeats, sizeof *med, cmp);
    if (y[3] != 44.0f) { fprintf(stderr, "wrong result %g\n", y[3]); return 1; }
    printf("ndk compute (reusable, tiny ADD): median %.2f us (median of %d repeats x %d runs)\n",
           med[repeats / 2] / 1000, repeats, runs);
    ANeuralNetworksExecution_free(e);
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);
    free(lat);
    free(med);
    return 0;
}

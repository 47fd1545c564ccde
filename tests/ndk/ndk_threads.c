/* 8 threads x 200 executions through the NNAPI C API, each thread with its
 * own execution of one shared compilation and its own data; every result is
 * checked. Prints "ndk_threads: 1600 executions correct" and exits 0. */
#include <pthread.h>
#include <stdio.h>
#include "NeuralNetworks.h"

#define THREADS 8
#define RUNS 200

static ANeuralNetworksCompilation *compilation;

static void *worker(void *arg) {
    long id = (long)arg, bad = 0;
    ANeuralNetworksExecution *e = NULL;
    float a[4], b[4], out[4];
    if (ANeuralNetworksExecution_create(compilation, &e) != ANEURALNETWORKS_NO_ERROR) return (void *)RUNS;
    for (int i = 0; i < RUNS; i++) {
        for (int k = 0; k < 4; k++) { a[k] = (float)(id * 1000 + i); b[k] = (float)k; out[k] = -1; }
        int r = 0;
        if (i == 0) { /* bound once: later runs read the same buffers */
            r |= ANeuralNetworksExecution_setReusable(e, true);
            r |= ANeuralNetworksExecution_setInput(e, 0, NULL, a, sizeof a);
            r |= ANeuralNetworksExecution_setInput(e, 1, NULL, b, sizeof b);
            r |= ANeuralNetworksExecution_setOutput(e, 0, NULL, out, sizeof out);
        }
        r |= ANeuralNetworksExecution_compute(e);
        for (int k = 0; k < 4; k++) if (out[k] != a[k] + b[k]) r = 1;
        bad += r != 0;
    }
    ANeuralNetworksExecution_free(e);
    return (void *)bad;
}

int main(void) {
    uint32_t dims[2] = {2, 2}, in[3] = {0, 1, 2}, outs[1] = {3};
    ANeuralNetworksOperandType t = {ANEURALNETWORKS_TENSOR_FLOAT32, 2, dims, 0.0f, 0};
    ANeuralNetworksOperandType s = {ANEURALNETWORKS_INT32, 0, NULL, 0.0f, 0};
    int32_t act = ANEURALNETWORKS_FUSED_NONE;
    ANeuralNetworksModel *m = NULL;
    int r = ANeuralNetworksModel_create(&m);
    r |= ANeuralNetworksModel_addOperand(m, &t) | ANeuralNetworksModel_addOperand(m, &t);
    r |= ANeuralNetworksModel_addOperand(m, &s) | ANeuralNetworksModel_addOperand(m, &t);
    r |= ANeuralNetworksModel_setOperandValue(m, 2, &act, sizeof act);
    r |= ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_ADD, 3, in, 1, outs);
    r |= ANeuralNetworksModel_identifyInputsAndOutputs(m, 2, in, 1, outs);
    r |= ANeuralNetworksModel_finish(m);
    r |= ANeuralNetworksCompilation_create(m, &compilation);
    r |= ANeuralNetworksCompilation_finish(compilation);
    if (r) { fprintf(stderr, "ndk_threads: building the model failed\n"); return 1; }
    pthread_t th[THREADS];
    for (long i = 0; i < THREADS; i++) pthread_create(&th[i], NULL, worker, (void *)i);
    long bad = 0;
    for (int i = 0; i < THREADS; i++) { void *v; pthread_join(th[i], &v); bad += (long)v; }
    ANeuralNetworksCompilation_free(compilation);
    ANeuralNetworksModel_free(m);
    if (bad) { fprintf(stderr, "ndk_threads: %ld of %d executions wrong\n", bad, THREADS * RUNS); return 1; }
    printf("ndk_threads: %d executions correct\n", THREADS * RUNS);
    return 0;
}

/* The NNAPI NDK C API of libneuralnetworks.so: success paths and documented
 * error paths; "C<n>" names the item of api-behaviour-checklist.md checked.
 * Prints "ndk_test: N checks passed" and exits 0, or names each failed check. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "NeuralNetworks.h"

/* declared by the header only for Android; the library exports it everywhere */
typedef struct AHardwareBuffer AHardwareBuffer;
int ANeuralNetworksMemory_createFromAHardwareBuffer(const AHardwareBuffer *ahwb, ANeuralNetworksMemory **memory);

static int checks, failures;
#define EXPECT(call, want) do { int r_ = (call); checks++; if (r_ != (want)) { failures++; \
    fprintf(stderr, "%s:%d: %s = %d, expected %d\n", __FILE__, __LINE__, #call, r_, (int)(want)); } } while (0)
#define OK(call) EXPECT(call, ANEURALNETWORKS_NO_ERROR)
#define TRUE(cond) do { checks++; if (!(cond)) { failures++; fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond); } } while (0)

static uint32_t dims22[2] = {2, 2};

/* out = a + b, 2x2 float; output shape 0x0 when dynamic */
static ANeuralNetworksModel *add_model(int dynamic) {
    static uint32_t unknown[2] = {0, 0};
    ANeuralNetworksOperandType t = {ANEURALNETWORKS_TENSOR_FLOAT32, 2, dims22, 0.0f, 0};
    ANeuralNetworksOperandType o = {ANEURALNETWORKS_TENSOR_FLOAT32, 2, dynamic ? unknown : dims22, 0.0f, 0};
    ANeuralNetworksOperandType s = {ANEURALNETWORKS_INT32, 0, NULL, 0.0f, 0};
    ANeuralNetworksModel *m = NULL;
    OK(ANeuralNetworksModel_create(&m));
    OK(ANeuralNetworksModel_addOperand(m, &t));
    OK(ANeuralNetworksModel_addOperand(m, &t));
    OK(ANeuralNetworksModel_addOperand(m, &s));
    OK(ANeuralNetworksModel_addOperand(m, &o));
    int32_t act = ANEURALNETWORKS_FUSED_NONE;
    OK(ANeuralNetworksModel_setOperandValue(m, 2, &act, sizeof act));
    uint32_t in[3] = {0, 1, 2}, out[1] = {3};
    OK(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_ADD, 3, in, 1, out));
    OK(ANeuralNetworksModel_identifyInputsAndOutputs(m, 2, in, 1, out));
    OK(ANeuralNetworksModel_finish(m));
    return m;
}

static void test_runtime_and_devices(void) {
    TRUE(ANeuralNetworks_getRuntimeFeatureLevel() == ANEURALNETWORKS_FEATURE_LEVEL_8);
    TRUE(ANeuralNetworks_getDefaultLoopTimeout() == 2000000000ull);
    TRUE(ANeuralNetworks_getMaximumLoopTimeout() == 15000000000ull);
    uint32_t n = 0;
    OK(ANeuralNetworks_getDeviceCount(&n));
    TRUE(n == 1);
    EXPECT(ANeuralNetworks_getDeviceCount(NULL), ANEURALNETWORKS_UNEXPECTED_NULL); /* C2 */
    ANeuralNetworksDevice *d = NULL;
    OK(ANeuralNetworks_getDevice(0, &d));
    EXPECT(ANeuralNetworks_getDevice(1, &d), ANEURALNETWORKS_BAD_DATA);
    EXPECT(ANeuralNetworks_getDevice(0, NULL), ANEURALNETWORKS_UNEXPECTED_NULL);
    const char *name = NULL, *version = NULL;
    OK(ANeuralNetworksDevice_getName(d, &name));
    TRUE(name && strcmp(name, "nnc-cpu") == 0);
    EXPECT(ANeuralNetworksDevice_getName(NULL, &name), ANEURALNETWORKS_UNEXPECTED_NULL);
    EXPECT(ANeuralNetworksDevice_getName(d, NULL), ANEURALNETWORKS_UNEXPECTED_NULL);
    OK(ANeuralNetworksDevice_getVersion(d, &version));
    TRUE(version && *version);
    int32_t type = -1;
    OK(ANeuralNetworksDevice_getType(d, &type));
    TRUE(type == ANEURALNETWORKS_DEVICE_CPU);
    int64_t level = 0;
    OK(ANeuralNetworksDevice_getFeatureLevel(d, &level));
    TRUE(level == ANEURALNETWORKS_FEATURE_LEVEL_8);
    OK(ANeuralNetworksDevice_wait(d));
    EXPECT(ANeuralNetworksDevice_wait(NULL), ANEURALNETWORKS_UNEXPECTED_NULL);
}

static void test_model_errors(void) {
    ANeuralNetworksModel *m = NULL;
    EXPECT(ANeuralNetworksModel_create(NULL), ANEURALNETWORKS_UNEXPECTED_NULL);
    OK(ANeuralNetworksModel_create(&m));
    ANeuralNetworksOperandType t = {ANEURALNETWORKS_TENSOR_FLOAT32, 2, dims22, 0.0f, 0};
    EXPECT(ANeuralNetworksModel_addOperand(NULL, &t), ANEURALNETWORKS_UNEXPECTED_NULL);
    EXPECT(ANeuralNetworksModel_addOperand(m, NULL), ANEURALNETWORKS_UNEXPECTED_NULL);
    ANeuralNetworksOperandType bad = {12345, 0, NULL, 0.0f, 0};
    EXPECT(ANeuralNetworksModel_addOperand(m, &bad), ANEURALNETWORKS_BAD_DATA);
    OK(ANeuralNetworksModel_addOperand(m, &t));
    float v[4] = {0};
    EXPECT(ANeuralNetworksModel_setOperandValue(m, 7, v, sizeof v), ANEURALNETWORKS_BAD_DATA);
    EXPECT(ANeuralNetworksModel_setOperandValue(m, 0, v, 3), ANEURALNETWORKS_BAD_DATA);
    uint32_t in[1] = {0};
    EXPECT(ANeuralNetworksModel_addOperation(NULL, ANEURALNETWORKS_ADD, 1, in, 1, in), ANEURALNETWORKS_UNEXPECTED_NULL); /* C54 */
    EXPECT(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_ADD, 0, NULL, 1, in), ANEURALNETWORKS_UNEXPECTED_NULL); /* C54 */
    EXPECT(ANeuralNetworksModel_identifyInputsAndOutputs(m, 0, NULL, 1, in), ANEURALNETWORKS_UNEXPECTED_NULL); /* C61 */
    EXPECT(ANeuralNetworksModel_finish(NULL), ANEURALNETWORKS_UNEXPECTED_NULL); /* C2 */
    EXPECT(ANeuralNetworksModel_relaxComputationFloat32toFloat16(NULL, true), ANEURALNETWORKS_UNEXPECTED_NULL); /* C16 */
    ANeuralNetworksSymmPerChannelQuantParams q = {0, 0, NULL};
    EXPECT(ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(NULL, 0, &q), ANEURALNETWORKS_UNEXPECTED_NULL); /* C35 */
    EXPECT(ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(m, 0, NULL), ANEURALNETWORKS_UNEXPECTED_NULL); /* C35 */
    ANeuralNetworksCompilation *c = NULL;
    EXPECT(ANeuralNetworksCompilation_create(m, &c), ANEURALNETWORKS_BAD_STATE); /* C19: unfinished */
    EXPECT(ANeuralNetworksCompilation_create(NULL, &c), ANEURALNETWORKS_UNEXPECTED_NULL); /* C19 */
    ANeuralNetworksModel_free(m); /* C4: unfinished model */
    m = add_model(0);
    EXPECT(ANeuralNetworksModel_relaxComputationFloat32toFloat16(m, true), ANEURALNETWORKS_BAD_STATE); /* C16 */
    EXPECT(ANeuralNetworksModel_addOperand(m, &t), ANEURALNETWORKS_BAD_STATE);
    EXPECT(ANeuralNetworksCompilation_create(m, NULL), ANEURALNETWORKS_UNEXPECTED_NULL); /* C19 */
    ANeuralNetworksDevice *d = NULL;
    OK(ANeuralNetworks_getDevice(0, &d));
    bool supported[1] = {false};
    const ANeuralNetworksDevice *devs[1] = {d};
    OK(ANeuralNetworksModel_getSupportedOperationsForDevices(m, devs, 1, supported));
    TRUE(supported[0]);
    EXPECT(ANeuralNetworksModel_getSupportedOperationsForDevices(m, NULL, 1, supported), ANEURALNETWORKS_UNEXPECTED_NULL);
    EXPECT(ANeuralNetworksModel_getSupportedOperationsForDevices(m, devs, 1, NULL), ANEURALNETWORKS_UNEXPECTED_NULL);
    ANeuralNetworksModel_free(m);
}

static ANeuralNetworksCompilation *compile(ANeuralNetworksModel *m) {
    ANeuralNetworksCompilation *c = NULL;
    OK(ANeuralNetworksCompilation_create(m, &c));
    OK(ANeuralNetworksCompilation_setPreference(c, ANEURALNETWORKS_PREFER_SUSTAINED_SPEED));
    OK(ANeuralNetworksCompilation_setPriority(c, ANEURALNETWORKS_PRIORITY_HIGH));
    OK(ANeuralNetworksCompilation_finish(c));
    return c;
}

static void test_compilation(void) {
    ANeuralNetworksModel *m = add_model(0);
    ANeuralNetworksCompilation *c = NULL;
    OK(ANeuralNetworksCompilation_create(m, &c));
    EXPECT(ANeuralNetworksCompilation_setPreference(c, 99), ANEURALNETWORKS_BAD_DATA);
    EXPECT(ANeuralNetworksCompilation_setPreference(NULL, 0), ANEURALNETWORKS_UNEXPECTED_NULL);
    EXPECT(ANeuralNetworksCompilation_setPriority(c, 7), ANEURALNETWORKS_BAD_DATA);
    uint8_t token[ANEURALNETWORKS_BYTE_SIZE_OF_CACHE_TOKEN] = {0};
    EXPECT(ANeuralNetworksCompilation_setCaching(c, NULL, token), ANEURALNETWORKS_UNEXPECTED_NULL);
    EXPECT(ANeuralNetworksCompilation_setCaching(c, "/tmp", NULL), ANEURALNETWORKS_UNEXPECTED_NULL);
    /* setTimeout needs a compilation for exactly one device (createForDevices) */
    EXPECT(ANeuralNetworksCompilation_setTimeout(c, 1000000000ull), ANEURALNETWORKS_BAD_DATA);
    uint32_t align = 0, pad = 0;
    EXPECT(ANeuralNetworksCompilation_getPreferredMemoryAlignmentForInput(c, 0, &align), ANEURALNETWORKS_BAD_STATE);
    ANeuralNetworksCompilation_free(c); /* C4: unfinished compilation */
    ANeuralNetworksDevice *d = NULL;
    OK(ANeuralNetworks_getDevice(0, &d));
    const ANeuralNetworksDevice *devs[1] = {d};
    OK(ANeuralNetworksCompilation_createForDevices(m, devs, 1, &c));
    OK(ANeuralNetworksCompilation_setTimeout(c, 60000000000ull));
    OK(ANeuralNetworksCompilation_finish(c));
    EXPECT(ANeuralNetworksCompilation_finish(c), ANEURALNETWORKS_BAD_STATE);
    OK(ANeuralNetworksCompilation_getPreferredMemoryAlignmentForInput(c, 0, &align));
    OK(ANeuralNetworksCompilation_getPreferredMemoryPaddingForInput(c, 0, &pad));
    TRUE(align >= 1 && pad >= 1);
    OK(ANeuralNetworksCompilation_getPreferredMemoryAlignmentForOutput(c, 0, &align));
    OK(ANeuralNetworksCompilation_getPreferredMemoryPaddingForOutput(c, 0, &pad));
    EXPECT(ANeuralNetworksCompilation_getPreferredMemoryAlignmentForInput(c, 5, &align), ANEURALNETWORKS_BAD_DATA);
    EXPECT(ANeuralNetworksCompilation_getPreferredMemoryPaddingForOutput(c, 0, NULL), ANEURALNETWORKS_UNEXPECTED_NULL);
    /* C4-style: free the model first, the compilation stays usable */
    ANeuralNetworksModel_free(m);
    ANeuralNetworksExecution *e = NULL;
    OK(ANeuralNetworksExecution_create(c, &e));
    ANeuralNetworksCompilation_free(c);
    float a[4] = {1, 2, 3, 4}, b[4] = {1, 1, 1, 1}, out[4] = {0};
    OK(ANeuralNetworksExecution_setInput(e, 0, NULL, a, sizeof a));
    OK(ANeuralNetworksExecution_setInput(e, 1, NULL, b, sizeof b));
    OK(ANeuralNetworksExecution_setOutput(e, 0, NULL, out, sizeof out));
    OK(ANeuralNetworksExecution_compute(e));
    TRUE(out[3] == 5.0f);
    ANeuralNetworksExecution_free(e);
}

static void test_execution(void) {
    ANeuralNetworksModel *m = add_model(1);
    ANeuralNetworksCompilation *c = compile(m);
    ANeuralNetworksExecution *e = NULL;
    EXPECT(ANeuralNetworksExecution_create(NULL, &e), ANEURALNETWORKS_UNEXPECTED_NULL);
    EXPECT(ANeuralNetworksExecution_create(c, NULL), ANEURALNETWORKS_UNEXPECTED_NULL);
    OK(ANeuralNetworksExecution_create(c, &e));
    float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40}, out[4] = {0}, small[2];
    EXPECT(ANeuralNetworksExecution_compute(e), ANEURALNETWORKS_BAD_DATA); /* inputs not set */
    ANeuralNetworksExecution_free(e);
    OK(ANeuralNetworksExecution_create(c, &e));
    EXPECT(ANeuralNetworksExecution_setInput(e, 2, NULL, a, sizeof a), ANEURALNETWORKS_BAD_DATA);
    EXPECT(ANeuralNetworksExecution_setInput(e, 0, NULL, a, 3), ANEURALNETWORKS_BAD_DATA);
    EXPECT(ANeuralNetworksExecution_setInput(NULL, 0, NULL, a, sizeof a), ANEURALNETWORKS_UNEXPECTED_NULL);
    OK(ANeuralNetworksExecution_setReusable(e, true));
    /* timing needs a compilation for exactly one device (createForDevices) */
    EXPECT(ANeuralNetworksExecution_setMeasureTiming(e, true), ANEURALNETWORKS_BAD_DATA);
    OK(ANeuralNetworksExecution_setLoopTimeout(e, 1000000000ull));
    OK(ANeuralNetworksExecution_setInput(e, 0, NULL, a, sizeof a));
    OK(ANeuralNetworksExecution_setInput(e, 1, NULL, b, sizeof b));
    OK(ANeuralNetworksExecution_setOutput(e, 0, NULL, small, sizeof small));
    EXPECT(ANeuralNetworksExecution_compute(e), ANEURALNETWORKS_OUTPUT_INSUFFICIENT_SIZE);
    uint32_t rank = 0, shape[2] = {0, 0};
    EXPECT(ANeuralNetworksExecution_getOutputOperandDimensions(e, 0, shape), ANEURALNETWORKS_OUTPUT_INSUFFICIENT_SIZE);
    TRUE(shape[0] == 2 && shape[1] == 2);
    ANeuralNetworksExecution_free(e);
    OK(ANeuralNetworksExecution_create(c, &e));
    OK(ANeuralNetworksExecution_setReusable(e, true));
    OK(ANeuralNetworksExecution_setInput(e, 0, NULL, a, sizeof a));
    OK(ANeuralNetworksExecution_setInput(e, 1, NULL, b, sizeof b));
    OK(ANeuralNetworksExecution_setOutput(e, 0, NULL, out, sizeof out));
    EXPECT(ANeuralNetworksExecution_getOutputOperandRank(e, 0, &rank), ANEURALNETWORKS_BAD_STATE);
    for (int i = 0; i < 3; i++) OK(ANeuralNetworksExecution_compute(e));
    OK(ANeuralNetworksExecution_getOutputOperandRank(e, 0, &rank));
    OK(ANeuralNetworksExecution_getOutputOperandDimensions(e, 0, shape));
    TRUE(rank == 2 && shape[0] == 2 && shape[1] == 2 && out[0] == 11.0f && out[3] == 44.0f);
    EXPECT(ANeuralNetworksExecution_getOutputOperandRank(e, 0, NULL), ANEURALNETWORKS_UNEXPECTED_NULL);
    EXPECT(ANeuralNetworksExecution_getOutputOperandRank(e, 3, &rank), ANEURALNETWORKS_BAD_DATA);
    uint64_t ns = 0;
    EXPECT(ANeuralNetworksExecution_getDuration(e, ANEURALNETWORKS_DURATION_ON_HARDWARE, &ns), ANEURALNETWORKS_BAD_STATE);
    /* asynchronous, with and without dependencies */
    ANeuralNetworksEvent *ev = NULL, *ev2 = NULL;
    OK(ANeuralNetworksExecution_startCompute(e, &ev));
    OK(ANeuralNetworksEvent_wait(ev));
    int fd = 0;
    EXPECT(ANeuralNetworksEvent_getSyncFenceFd(NULL, &fd), ANEURALNETWORKS_UNEXPECTED_NULL);
    const ANeuralNetworksEvent *deps[1] = {ev};
    /* a fenced computation cannot report the dynamic output shape */
    EXPECT(ANeuralNetworksExecution_startComputeWithDependencies(e, deps, 1, 0, &ev2), ANEURALNETWORKS_BAD_DATA);
    TRUE(ev2 == NULL);
    EXPECT(ANeuralNetworksEvent_wait(NULL), ANEURALNETWORKS_UNEXPECTED_NULL);
    EXPECT(ANeuralNetworksExecution_startCompute(e, NULL), ANEURALNETWORKS_UNEXPECTED_NULL);
    ANeuralNetworksEvent_free(ev2);
    ANeuralNetworksEvent_free(ev);
    /* burst */
    ANeuralNetworksBurst *burst = NULL;
    EXPECT(ANeuralNetworksBurst_create(NULL, &burst), ANEURALNETWORKS_UNEXPECTED_NULL);
    OK(ANeuralNetworksBurst_create(c, &burst));
    OK(ANeuralNetworksExecution_burstCompute(e, burst));
    EXPECT(ANeuralNetworksExecution_burstCompute(e, NULL), ANEURALNETWORKS_UNEXPECTED_NULL);
    /* timing */
    ANeuralNetworksExecution *t = NULL;
    ANeuralNetworksDevice *d = NULL;
    const ANeuralNetworksDevice *devs[1];
    OK(ANeuralNetworks_getDevice(0, &d));
    devs[0] = d;
    ANeuralNetworksCompilation *c1 = NULL;
    OK(ANeuralNetworksCompilation_createForDevices(m, devs, 1, &c1));
    OK(ANeuralNetworksCompilation_finish(c1));
    OK(ANeuralNetworksExecution_create(c1, &t));
    OK(ANeuralNetworksExecution_setMeasureTiming(t, true));
    OK(ANeuralNetworksExecution_setTimeout(t, 60000000000ull));
    OK(ANeuralNetworksExecution_enableInputAndOutputPadding(t, true));
    OK(ANeuralNetworksExecution_setInput(t, 0, NULL, a, sizeof a));
    OK(ANeuralNetworksExecution_setInput(t, 1, NULL, b, sizeof b));
    OK(ANeuralNetworksExecution_setOutput(t, 0, NULL, out, sizeof out));
    OK(ANeuralNetworksExecution_compute(t));
    OK(ANeuralNetworksExecution_getDuration(t, ANEURALNETWORKS_DURATION_ON_HARDWARE, &ns));
    EXPECT(ANeuralNetworksExecution_compute(t), ANEURALNETWORKS_BAD_STATE); /* not reusable */
    /* C4: frees in any order: compilation and model before the executions */
    ANeuralNetworksCompilation_free(c1);
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);
    ANeuralNetworksExecution_free(t);
    ANeuralNetworksBurst_free(burst);
    ANeuralNetworksExecution_free(e);
}

static void test_memory(void) {
    ANeuralNetworksModel *m = add_model(0);
    ANeuralNetworksCompilation *c = compile(m);
    int fd = memfd_create("ndk_test", 0);
    TRUE(fd >= 0 && ftruncate(fd, 64) == 0);
    float *p = mmap(NULL, 64, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    for (int i = 0; i < 8; i++) p[i] = (float)i;
    ANeuralNetworksMemory *mem = NULL, *dev = NULL, *dev2 = NULL;
    EXPECT(ANeuralNetworksMemory_createFromFd(64, PROT_READ | PROT_WRITE, fd, 0, NULL), ANEURALNETWORKS_UNEXPECTED_NULL);
    OK(ANeuralNetworksMemory_createFromFd(64, PROT_READ | PROT_WRITE, fd, 0, &mem));
    EXPECT(ANeuralNetworksMemory_createFromAHardwareBuffer(NULL, &mem), ANEURALNETWORKS_UNEXPECTED_NULL);
    EXPECT(ANeuralNetworksMemory_createFromAHardwareBuffer((const AHardwareBuffer *)p, &dev), ANEURALNETWORKS_BAD_DATA);
    ANeuralNetworksMemoryDesc *desc = NULL;
    OK(ANeuralNetworksMemoryDesc_create(&desc));
    EXPECT(ANeuralNetworksMemoryDesc_finish(desc), ANEURALNETWORKS_BAD_DATA); /* no role */
    OK(ANeuralNetworksMemoryDesc_addInputRole(desc, c, 0, 1.0f));
    OK(ANeuralNetworksMemoryDesc_addOutputRole(desc, c, 0, 1.0f));
    EXPECT(ANeuralNetworksMemoryDesc_addInputRole(desc, c, 9, 1.0f), ANEURALNETWORKS_BAD_DATA);
    OK(ANeuralNetworksMemoryDesc_setDimensions(desc, 2, dims22));
    OK(ANeuralNetworksMemoryDesc_finish(desc));
    OK(ANeuralNetworksMemory_createFromDesc(desc, &dev));
    OK(ANeuralNetworksMemory_createFromDesc(desc, &dev2));
    EXPECT(ANeuralNetworksMemory_copy(dev, dev2), ANEURALNETWORKS_BAD_DATA); /* uninitialised source */
    ANeuralNetworksExecution *e = NULL;
    OK(ANeuralNetworksExecution_create(c, &e));
    OK(ANeuralNetworksExecution_setInputFromMemory(e, 0, NULL, mem, 0, 16));
    OK(ANeuralNetworksExecution_setInputFromMemory(e, 1, NULL, mem, 16, 16));
    OK(ANeuralNetworksExecution_setOutputFromMemory(e, 0, NULL, dev, 0, 0));
    EXPECT(ANeuralNetworksExecution_setInputFromMemory(e, 0, NULL, mem, 60, 16), ANEURALNETWORKS_BAD_DATA);
    OK(ANeuralNetworksExecution_compute(e));
    OK(ANeuralNetworksMemory_copy(dev, dev2));
    /* dev2 = a + b = {4, 6, 8, 10}; then dev2 + p[4..8] */
    ANeuralNetworksExecution *e2 = NULL;
    float out[4] = {0};
    OK(ANeuralNetworksExecution_create(c, &e2));
    OK(ANeuralNetworksExecution_setInputFromMemory(e2, 0, NULL, dev2, 0, 0));
    OK(ANeuralNetworksExecution_setInputFromMemory(e2, 1, NULL, mem, 16, 16));
    OK(ANeuralNetworksExecution_setOutput(e2, 0, NULL, out, sizeof out));
    OK(ANeuralNetworksExecution_compute(e2));
    TRUE(out[0] == 8.0f && out[3] == 17.0f);
    ANeuralNetworksExecution_free(e2);
    /* a model constant from memory */
    ANeuralNetworksModel *m2 = NULL;
    ANeuralNetworksOperandType t = {ANEURALNETWORKS_TENSOR_FLOAT32, 2, dims22, 0.0f, 0};
    OK(ANeuralNetworksModel_create(&m2));
    OK(ANeuralNetworksModel_addOperand(m2, &t));
    OK(ANeuralNetworksModel_setOperandValueFromMemory(m2, 0, mem, 0, 16));
    EXPECT(ANeuralNetworksModel_setOperandValueFromMemory(m2, 0, NULL, 0, 16), ANEURALNETWORKS_UNEXPECTED_NULL);
    ANeuralNetworksModel_free(m2);
    ANeuralNetworksExecution_free(e);
    ANeuralNetworksMemory_free(dev2);
    ANeuralNetworksMemory_free(dev);
    ANeuralNetworksMemoryDesc_free(desc);
    ANeuralNetworksMemory_free(mem);
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);
    munmap(p, 64);
    close(fd);
}

static void test_free_null(void) { /* C3 */
    ANeuralNetworksModel_free(NULL);
    ANeuralNetworksCompilation_free(NULL);
    ANeuralNetworksExecution_free(NULL);
    ANeuralNetworksBurst_free(NULL);
    ANeuralNetworksMemory_free(NULL);
    ANeuralNetworksMemoryDesc_free(NULL);
    ANeuralNetworksEvent_free(NULL);
    checks++;
}

static void test_events(void) {
    ANeuralNetworksEvent *ev = NULL;
    EXPECT(ANeuralNetworksEvent_createFromSyncFenceFd(-1, &ev), ANEURALNETWORKS_BAD_DATA);
    EXPECT(ANeuralNetworksEvent_createFromSyncFenceFd(0, NULL), ANEURALNETWORKS_UNEXPECTED_NULL);
}

int main(void) {
    test_runtime_and_devices();
    test_model_errors();
    test_compilation();
    test_execution();
    test_memory();
    test_events();
    test_free_null();
    if (failures) {
        fprintf(stderr, "ndk_test: %d of %d checks failed\n", failures, checks);
        return 1;
    }
    printf("ndk_test: %d checks passed\n", checks);
    return 0;
}

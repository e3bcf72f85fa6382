#pragma once

// The raw reference for timing tests and benchmarks: vector add timed with
// plain driver calls in the test's own process, the way a careful person
// would without Kernel Playground. The flush kernel queued before the start
// event keeps the GPU busy while the host queues the event, the launch and
// the end event, so launch latency stays out of the pair as the worker's
// blocking kernel keeps it out.

#include "cuda/driverapi.h"

#include <QString>

#include <algorithm>
#include <random>
#include <vector>

namespace Kp::Raw {

inline const char *kSource = R"(
extern "C" __global__ void vectorAdd(const float *__restrict__ a,
                                     const float *__restrict__ b,
                                     float *__restrict__ c,
                                     int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
extern "C" __global__ void raw_flush_read(const uint4 *p, unsigned long long n, unsigned never, unsigned *sink)
{
    unsigned acc = 0;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        const uint4 v = p[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == never) *sink = acc;
}
extern "C" __global__ void raw_empty() {}
)";

enum class Flush { None, Memset, Read };

inline double median(std::vector<double> v)
{
    if (v.empty()) {
        return 0;
    }
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

/** One context, module, stream, the flush buffer and vector add's buffers. */
class VectorAdd
{
public:
    /** Empty string on success, else what failed. cubin holds kSource compiled for this device. */
    QString open(const QByteArray &cubin)
    {
        const auto loaded = DriverApi::instance();
        if (!loaded) {
            return loaded.error().message;
        }
        api = *loaded;
        CUdevice d = 0;
        if (!ok(api->cuDeviceGet(&d, 0), "cuDeviceGet") || !ok(api->cuDevicePrimaryCtxRetain(&ctx, d), "retain") ||
            !ok(api->cuCtxSetCurrent(ctx), "cuCtxSetCurrent") ||
            !ok(api->cuModuleLoadData(&mod, cubin.constData()), "cuModuleLoadData") ||
            !ok(api->cuModuleGetFunction(&add, mod, "vectorAdd"), "vectorAdd") ||
            !ok(api->cuModuleGetFunction(&flushRead, mod, "raw_flush_read"), "raw_flush_read") ||
            !ok(api->cuModuleGetFunction(&empty, mod, "raw_empty"), "raw_empty") ||
            !ok(api->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate") ||
            !ok(api->cuEventCreate(&e0, CU_EVENT_DEFAULT), "cuEventCreate") ||
            !ok(api->cuEventCreate(&e1, CU_EVENT_DEFAULT), "cuEventCreate")) {
            return m_error;
        }
        int l2 = 0;
        api->cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, d);
        api->cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d);
        flushBytes = size_t(std::max(2 * l2, 1 << 20));
        if (!ok(api->cuMemAlloc(&flushBuf, flushBytes), "cuMemAlloc") ||
            !ok(api->cuMemsetD8Async(flushBuf, 0, flushBytes, stream), "cuMemsetD8Async") ||
            !ok(api->cuMemAlloc(&sink, 64), "cuMemAlloc") || !ok(api->cuStreamSynchronize(stream), "sync")) {
            return m_error;
        }
        return {};
    }

    /** Allocates a, b, c of n floats, a and b random. */
    QString resize(int count)
    {
        for (CUdeviceptr *p : {&a, &b, &c}) {
            if (*p) {
                api->cuMemFree(*p);
                *p = 0;
            }
        }
        n = count;
        std::vector<float> host(static_cast<size_t>(n));
        std::mt19937 rng(7);
        std::uniform_real_distribution<float> u(0, 1);
        for (CUdeviceptr *p : {&a, &b, &c}) {
            if (!ok(api->cuMemAlloc(p, size_t(n) * 4), "cuMemAlloc")) {
                return m_error;
            }
            for (float &v : host) {
                v = u(rng);
            }
            if (!ok(api->cuMemcpyHtoDAsync(*p, host.data(), size_t(n) * 4, stream), "upload") ||
                !ok(api->cuStreamSynchronize(stream), "sync")) {
                return m_error;
            }
        }
        return {};
    }

    /** Median event time (ms) of `samples` samples of vector add (or the empty kernel), each after `flush`. */
    double time(Flush flush, bool emptyKernel, int samples = 301, int block = 256)
    {
        std::vector<double> v;
        for (int i = 0; i < samples; ++i) {
            if (flush == Flush::Memset) {
                api->cuMemsetD8Async(flushBuf, 0, flushBytes, stream);
            } else if (flush == Flush::Read) {
                CUdeviceptr p = flushBuf;
                unsigned long long words = flushBytes / 16;
                unsigned never = 0x9e3779b9u;
                CUdeviceptr s = sink;
                void *params[] = {&p, &words, &never, &s};
                api->cuLaunchKernel(flushRead, unsigned(sms * 8), 1, 1, 256, 1, 1, 0, stream, params, nullptr);
            }
            api->cuEventRecord(e0, stream);
            if (emptyKernel) {
                api->cuLaunchKernel(empty, 1, 1, 1, 1, 1, 1, 0, stream, nullptr, nullptr);
            } else {
                int count = n;
                void *params[] = {&a, &b, &c, &count};
                api->cuLaunchKernel(add, unsigned((n + block - 1) / block), 1, 1, unsigned(block), 1, 1, 0, stream,
                                    params, nullptr);
            }
            api->cuEventRecord(e1, stream);
            api->cuEventSynchronize(e1);
            float ms = 0;
            api->cuEventElapsedTime(&ms, e0, e1);
            v.push_back(ms);
        }
        return median(v);
    }

    const DriverApi *api = nullptr;
    CUcontext ctx = nullptr;
    CUmodule mod = nullptr;
    CUfunction add = nullptr, flushRead = nullptr, empty = nullptr;
    CUstream stream = nullptr;
    CUevent e0 = nullptr, e1 = nullptr;
    CUdeviceptr flushBuf = 0, sink = 0, a = 0, b = 0, c = 0;
    size_t flushBytes = 0;
    int sms = 1;
    int n = 0;

private:
    bool ok(CUresult r, const char *what)
    {
        if (r != CUDA_SUCCESS) {
            m_error = QStringLiteral("%1: %2").arg(QLatin1String(what), api->error(r, what).message);
            return false;
        }
        return true;
    }
    QString m_error;
};

} // namespace Kp::Raw

// The floor bench_startup compares `kpg run` with: the smallest program a
// user would write to do what `kpg run --no-timing vector_add.kpg` does. It
// reads the kernel's source, compiles it with NVRTC for the GPU's own
// architecture, loads it with the driver API, fills a and b on the host,
// copies them in, launches vectorAdd over n elements, copies c back and
// checks it. No Qt, no worker process, no compile cache: a plain C++ program
// that loads NVRTC and the driver as the programs do (dlopen), so the two
// pay the same library loading.
//   bench_startup_floor KERNEL.cu [n]
// Exit 0 when c == a + b; 1 on a failed check; 2 on an error (printed).

#include <cuda.h>
#include <nvrtc.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <dlfcn.h>

namespace {

void *open(std::initializer_list<const char *> names)
{
    for (const char *n : names) {
        if (void *h = dlopen(n, RTLD_NOW | RTLD_LOCAL)) {
            return h;
        }
    }
    return nullptr;
}

template<typename F> F sym(void *lib, const char *name)
{
    return reinterpret_cast<F>(dlsym(lib, name));
}

int fail(const char *what, int code)
{
    std::fprintf(stderr, "bench_startup_floor: %s failed (%d)\n", what, code);
    return 2;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: bench_startup_floor KERNEL.cu [n]\n");
        return 2;
    }
    const int n = argc > 2 ? std::atoi(argv[2]) : 1 << 20;
    std::ifstream in(argv[1]);
    std::stringstream text;
    text << in.rdbuf();
    const std::string source = text.str();
    if (source.empty()) {
        std::fprintf(stderr, "bench_startup_floor: cannot read %s\n", argv[1]);
        return 2;
    }

    void *cuda = open({"libcuda.so.1", "libcuda.so"});
    void *rtc = open({"libnvrtc.so.13", "libnvrtc.so", "/usr/local/cuda/lib64/libnvrtc.so"});
    if (!cuda || !rtc) {
        std::fprintf(stderr, "bench_startup_floor: %s\n", !cuda ? "no NVIDIA driver" : "no NVRTC");
        return 2;
    }
    auto cuInit = sym<CUresult (*)(unsigned)>(cuda, "cuInit");
    auto cuDeviceGet = sym<CUresult (*)(CUdevice *, int)>(cuda, "cuDeviceGet");
    auto cuDeviceGetAttribute = sym<CUresult (*)(int *, CUdevice_attribute, CUdevice)>(cuda, "cuDeviceGetAttribute");
    auto cuDevicePrimaryCtxRetain = sym<CUresult (*)(CUcontext *, CUdevice)>(cuda, "cuDevicePrimaryCtxRetain");
    auto cuCtxSetCurrent = sym<CUresult (*)(CUcontext)>(cuda, "cuCtxSetCurrent");
    auto cuModuleLoadData = sym<CUresult (*)(CUmodule *, const void *)>(cuda, "cuModuleLoadData");
    auto cuModuleGetFunction = sym<CUresult (*)(CUfunction *, CUmodule, const char *)>(cuda, "cuModuleGetFunction");
    auto cuMemAlloc = sym<CUresult (*)(CUdeviceptr *, size_t)>(cuda, "cuMemAlloc_v2");
    auto cuMemcpyHtoD = sym<CUresult (*)(CUdeviceptr, const void *, size_t)>(cuda, "cuMemcpyHtoD_v2");
    auto cuMemcpyDtoH = sym<CUresult (*)(void *, CUdeviceptr, size_t)>(cuda, "cuMemcpyDtoH_v2");
    auto cuLaunchKernel = sym<CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                           unsigned, CUstream, void **, void **)>(cuda, "cuLaunchKernel");
    auto nvrtcCreateProgram =
        sym<nvrtcResult (*)(nvrtcProgram *, const char *, const char *, int, const char *const *, const char *const *)>(
            rtc, "nvrtcCreateProgram");
    auto nvrtcCompileProgram = sym<nvrtcResult (*)(nvrtcProgram, int, const char *const *)>(rtc, "nvrtcCompileProgram");
    auto nvrtcGetCUBINSize = sym<nvrtcResult (*)(nvrtcProgram, size_t *)>(rtc, "nvrtcGetCUBINSize");
    auto nvrtcGetCUBIN = sym<nvrtcResult (*)(nvrtcProgram, char *)>(rtc, "nvrtcGetCUBIN");

    CUresult r = cuInit(0);
    if (r != CUDA_SUCCESS) {
        return fail("cuInit", r);
    }
    CUdevice dev = 0;
    int major = 0;
    int minor = 0;
    cuDeviceGet(&dev, 0);
    cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);

    nvrtcProgram prog = nullptr;
    if (nvrtcCreateProgram(&prog, source.c_str(), "kernel.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS) {
        return fail("nvrtcCreateProgram", 0);
    }
    const std::string arch = "--gpu-architecture=sm_" + std::to_string(major * 10 + minor);
    const char *options[] = {arch.c_str(), "--std=c++17"};
    if (const nvrtcResult c = nvrtcCompileProgram(prog, 2, options); c != NVRTC_SUCCESS) {
        return fail("nvrtcCompileProgram", int(c));
    }
    size_t size = 0;
    nvrtcGetCUBINSize(prog, &size);
    std::vector<char> cubin(size);
    nvrtcGetCUBIN(prog, cubin.data());

    CUcontext ctx = nullptr;
    cuDevicePrimaryCtxRetain(&ctx, dev);
    cuCtxSetCurrent(ctx);
    CUmodule module = nullptr;
    CUfunction fn = nullptr;
    if ((r = cuModuleLoadData(&module, cubin.data())) != CUDA_SUCCESS) {
        return fail("cuModuleLoadData", r);
    }
    if ((r = cuModuleGetFunction(&fn, module, "vectorAdd")) != CUDA_SUCCESS) {
        return fail("cuModuleGetFunction", r);
    }

    std::vector<float> a(static_cast<size_t>(n));
    std::vector<float> b(static_cast<size_t>(n));
    std::vector<float> c(static_cast<size_t>(n));
    unsigned state = 12345;
    for (int i = 0; i < n; ++i) {
        state = state * 1664525u + 1013904223u;
        a[size_t(i)] = float(state >> 8) / float(1 << 24);
        state = state * 1664525u + 1013904223u;
        b[size_t(i)] = float(state >> 8) / float(1 << 24);
    }
    const size_t bytes = size_t(n) * sizeof(float);
    CUdeviceptr da = 0;
    CUdeviceptr db = 0;
    CUdeviceptr dc = 0;
    if (cuMemAlloc(&da, bytes) || cuMemAlloc(&db, bytes) || cuMemAlloc(&dc, bytes)) {
        return fail("cuMemAlloc", 0);
    }
    cuMemcpyHtoD(da, a.data(), bytes);
    cuMemcpyHtoD(db, b.data(), bytes);
    int count = n;
    void *args[] = {&da, &db, &dc, &count};
    const unsigned block = 256;
    if ((r = cuLaunchKernel(fn, unsigned((n + block - 1) / block), 1, 1, block, 1, 1, 0, nullptr, args, nullptr)) !=
        CUDA_SUCCESS) {
        return fail("cuLaunchKernel", r);
    }
    if ((r = cuMemcpyDtoH(c.data(), dc, bytes)) != CUDA_SUCCESS) {
        return fail("cuMemcpyDtoH", r);
    }
    for (size_t i = 0; i < c.size(); ++i) {
        if (c[i] != a[i] + b[i]) {
            std::fprintf(stderr, "bench_startup_floor: c[%zu] = %g, expected %g\n", i, double(c[i]),
                         double(a[i] + b[i]));
            return 1;
        }
    }
    return 0;
}

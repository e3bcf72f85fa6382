// The Python programs of an export (docs/export.md): one body for the three
// Python targets, over a handful of helpers (compile, allocate, copy,
// launch, streams and events) written once per API. The body is the
// project; the helpers are the API.

#include "export/exportplan.h"
#include "run/texturedesc.h"

#include <QStringList>

namespace Kp::ExportDetail {

namespace {

QString py(const QString &s)
{
    return pythonStringLiteral(s);
}

QString pyList(const QStringList &items)
{
    QStringList quoted;
    for (const QString &i : items) {
        quoted << py(i);
    }
    return QStringLiteral("[") + quoted.join(QStringLiteral(", ")) + QStringLiteral("]");
}

QString pyNumber(double v)
{
    return shortestText(DType::Float64, QByteArray(reinterpret_cast<const char *>(&v), 8));
}

/** A typed NumPy scalar: np.int32(5), np.float32(0.24); bfloat16 as its bits in a uint16. */
QString pyValue(DType t, const QByteArray &bytes)
{
    const QString text = shortestText(t, bytes);
    if (t == DType::BFloat16) {
        quint16 bits = 0;
        std::memcpy(&bits, bytes.constData(), 2);
        return QStringLiteral("np.uint16(0x%1)  # bfloat16 %2, as its bits")
            .arg(bits, 4, 16, QLatin1Char('0'))
            .arg(text);
    }
    const QString np = QStringLiteral("np.") + dtypeName(t);
    if (text == QLatin1String("nan") || text.endsWith(QLatin1String("inf"))) {
        return QStringLiteral("%1(%2)").arg(np, py(text));
    }
    return QStringLiteral("%1(%2)").arg(np, text);
}

/** A struct member's value as a Python literal of its NumPy field (bfloat16: its bits). */
QString pyLeafValue(const StructLeaf &leaf, const QByteArray &structBytes)
{
    const QString text = leafText(leaf, structBytes);
    if (leaf.isBool) {
        return text == QLatin1String("true") ? QStringLiteral("True") : QStringLiteral("False");
    }
    if (leaf.component == DType::BFloat16) {
        quint16 bits = 0;
        std::memcpy(&bits, structBytes.constData() + leaf.offset, 2);
        return QStringLiteral("0x%1").arg(bits, 4, 16, QLatin1Char('0'));
    }
    if (text == QLatin1String("nan") || text.endsWith(QLatin1String("inf"))) {
        return QStringLiteral("float(%1)").arg(py(text));
    }
    return text;
}

/** The Python name of a struct type's dtype: "Transform_dtype", "ns__Params_dtype". */
QString structDtypeName(const QString &type)
{
    QString id;
    for (QChar c : type) {
        id += c.isLetterOrNumber() && c.unicode() < 0x80 ? c : QLatin1Char('_');
    }
    return id + QStringLiteral("_dtype");
}

QString tuple3(const Dim3 &d)
{
    return QStringLiteral("(%1, %2, %3)").arg(d[0]).arg(d[1]).arg(d[2]);
}

QString helpersFor(ExportTarget target)
{
    switch (target) {
    case ExportTarget::PyCuda:
        return QStringLiteral(R"PY(import pycuda.autoinit  # noqa: F401  (a context on GPU 0)
import pycuda.driver as drv
from pycuda.compiler import SourceModule

# --- The CUDA API, in the few calls this program needs -------------------------

allocations = []  # keeps the device memory alive; the program works with its addresses


def compile_module(source, names):
    """Compiles with nvcc (PyCUDA's SourceModule). no_extern_c=True keeps C++
    names, so each kernel is looked up by the symbol NVRTC lowered it to when the
    project was exported: PyCUDA has no name expressions."""
    module = SourceModule(source, options=NVCC_OPTIONS, no_extern_c=True, include_dirs=INCLUDE_DIRS, arch=ARCH)
    return module, {name: module.get_function(symbol) for name, symbol in names.items()}


def symbol_address(module, symbol, nbytes):
    """The memory of a __constant__ or __device__ variable of the module (get_global)."""
    address, size = module.get_global(symbol)
    if size != nbytes:
        raise SystemExit(f"the device variable {symbol} has {size} bytes, but its buffer {nbytes}")
    return int(address)


def alloc(nbytes):
    a = drv.mem_alloc(nbytes)
    allocations.append(a)
    return int(a)


def pin(array):
    # Page-locked host memory, as the playground's host copies: async copies need it.
    return drv.register_host_memory(array)


def new_stream(priority, legacy=False):
    # PyCUDA creates streams without a priority; the project's priorities are in the comments.
    return None if legacy else drv.Stream()


def new_event():
    return drv.Event()


def record(event, stream):
    event.record(stream)


def wait(stream, event):
    if stream is None:
        event.synchronize()
    else:
        stream.wait_for_event(event)


def sync(stream):
    if stream is None:
        drv.Context.synchronize()
    else:
        stream.synchronize()


def elapsed_ms(start, end):
    return end.time_since(start)


def bytes_of(array, offset, nbytes):
    return array.reshape(-1).view(np.uint8)[offset:offset + nbytes]


def copy_to_device(dptr, array, offset, nbytes, stream):
    drv.memcpy_htod_async(dptr + offset, bytes_of(array, offset, nbytes), stream)


def copy_to_host(array, dptr, offset, nbytes, stream):
    drv.memcpy_dtoh_async(bytes_of(array, offset, nbytes), dptr + offset, stream)


def memset(dptr, value, nbytes, stream):
    drv.memset_d8_async(dptr, value, nbytes, stream)


def allow_shared(kernel, nbytes):
    kernel.set_attribute(drv.function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, nbytes)


def launch(kernel, grid, block, shared, stream, args, cooperative=False):
    # PyCUDA has no cooperative launch; the export refuses projects that need one.
    kernel(*args, grid=grid, block=block, shared=shared, stream=stream)


def l2_cache_bytes():
    return drv.Context.get_device().get_attribute(drv.device_attribute.L2_CACHE_SIZE)
)PY");
    case ExportTarget::CuPy:
        return QStringLiteral(R"PY(import cupy as cp

# --- The CUDA API, in the few calls this program needs -------------------------

allocations = []  # keeps the device memory alive; the program works with its addresses


def compile_module(source, names, cooperative=()):
    """Compiles with NVRTC (CuPy's RawModule); C++ kernels and template
    instances are found through name expressions, as in the playground.
    CuPy launches cooperatively (grid.sync()) the kernels of a module made
    with enable_cooperative_groups: the kernels named in cooperative come
    from such a second module."""
    expressions = [name for name, symbol in names.items() if symbol is None]
    module = cp.RawModule(code=source, options=tuple(NVRTC_OPTIONS), name_expressions=expressions)
    kernels = {name: module.get_function(name if symbol is None else symbol) for name, symbol in names.items()}
    if cooperative:
        together = cp.RawModule(code=source, options=tuple(NVRTC_OPTIONS), name_expressions=expressions,
                                enable_cooperative_groups=True)
        for name in cooperative:
            symbol = names[name]
            kernels[name] = together.get_function(name if symbol is None else symbol)
    return module, kernels


def symbol_address(module, symbol, nbytes):
    """The memory of a __constant__ or __device__ variable of the module (RawModule.get_global).
    CuPy does not give the variable's size; the export checked it against the compiled source."""
    return module.get_global(symbol).ptr


def alloc(nbytes):
    m = cp.cuda.alloc(nbytes)
    allocations.append(m)
    return m.ptr


def pin(array):
    # Page-locked host memory, as the playground's host copies: async copies need it.
    cp.cuda.runtime.hostRegister(array.ctypes.data, array.nbytes, 0)
    return array


def new_stream(priority, legacy=False):
    if legacy:
        return cp.cuda.Stream.null
    if priority:
        return cp.cuda.Stream(non_blocking=True, priority=priority)
    return cp.cuda.Stream(non_blocking=True)


def new_event():
    return cp.cuda.Event()


def record(event, stream):
    event.record(stream)


def wait(stream, event):
    stream.wait_event(event)


def sync(stream):
    stream.synchronize()


def elapsed_ms(start, end):
    return cp.cuda.get_elapsed_time(start, end)


def copy_to_device(dptr, array, offset, nbytes, stream):
    cp.cuda.runtime.memcpyAsync(dptr + offset, array.ctypes.data + offset, nbytes,
                                cp.cuda.runtime.memcpyHostToDevice, stream.ptr)


def copy_to_host(array, dptr, offset, nbytes, stream):
    cp.cuda.runtime.memcpyAsync(array.ctypes.data + offset, dptr + offset, nbytes,
                                cp.cuda.runtime.memcpyDeviceToHost, stream.ptr)


def memset(dptr, value, nbytes, stream):
    cp.cuda.runtime.memsetAsync(dptr, value, nbytes, stream.ptr)


def allow_shared(kernel, nbytes):
    kernel.max_dynamic_shared_size_bytes = nbytes


def launch(kernel, grid, block, shared, stream, args, cooperative=False):
    # cooperative: the kernel came from compile_module's cooperative module, which CuPy launches so.
    with stream:
        kernel(grid, block, tuple(args), shared_mem=shared)


def l2_cache_bytes():
    return cp.cuda.Device().attributes["L2CacheSize"]
)PY");
    case ExportTarget::CudaPython:
    case ExportTarget::CudaCpp: break;
    }
    return QStringLiteral(R"PY(try:
    from cuda.core import Device, LaunchConfig, Program, ProgramOptions, StreamOptions
    from cuda.core import launch as launch_kernel
except ImportError:  # cuda.core before 0.4 had them in cuda.core.experimental only
    from cuda.core.experimental import Device, LaunchConfig, Program, ProgramOptions, StreamOptions
    from cuda.core.experimental import launch as launch_kernel
from cuda.bindings import driver

# --- The CUDA API, in the few calls this program needs -------------------------
# cuda.core compiles (NVRTC), loads and launches; memory, copies and events are
# the driver API's own calls from cuda.bindings, which cuda.core builds on.

device = Device(0)
device.set_current()
allocations = []  # device addresses, freed when the program ends


def checked(result):
    """cuda.bindings returns (error, value...); stop at the first error."""
    err = result[0]
    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"CUDA driver error {err}")
    return result[1] if len(result) == 2 else None


def compile_module(source, names):
    arch = ARCH or "sm_{}{}".format(*device.compute_capability)
    options = ProgramOptions(arch=arch, **PROGRAM_OPTIONS)
    expressions = [name for name, symbol in names.items() if symbol is None]
    code = Program(source, "c++", options=options).compile("cubin", name_expressions=expressions)
    return code, {name: code.get_kernel(name if symbol is None else symbol) for name, symbol in names.items()}


def symbol_address(code, symbol, nbytes):
    """The memory of a __constant__ or __device__ variable of the compiled code: cuda.core loads
    it as a CUlibrary (a CUmodule in older releases), whose driver call finds the variable."""
    handle = code.handle if hasattr(code, "handle") else code._handle
    if isinstance(handle, driver.CUlibrary):
        err, address, size = driver.cuLibraryGetGlobal(handle, symbol.encode())
    else:
        err, address, size = driver.cuModuleGetGlobal(handle, symbol.encode())
    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"CUDA driver error {err} looking up {symbol}")
    if size != nbytes:
        raise SystemExit(f"the device variable {symbol} has {size} bytes, but its buffer {nbytes}")
    return int(address)


def alloc(nbytes):
    p = int(checked(driver.cuMemAlloc(nbytes)))
    allocations.append(p)
    return p


def pin(array):
    # Page-locked host memory, as the playground's host copies: async copies need it.
    checked(driver.cuMemHostRegister(array.ctypes.data, array.nbytes, 0))
    return array


def new_stream(priority, legacy=False):
    if legacy:
        return device.default_stream
    return device.create_stream(options=StreamOptions(nonblocking=True, priority=priority))


def new_event():
    return checked(driver.cuEventCreate(0))


def record(event, stream):
    checked(driver.cuEventRecord(event, stream.handle))


def wait(stream, event):
    checked(driver.cuStreamWaitEvent(stream.handle, event, 0))


def sync(stream):
    checked(driver.cuStreamSynchronize(stream.handle))


def elapsed_ms(start, end):
    return checked(driver.cuEventElapsedTime(start, end))


def copy_to_device(dptr, array, offset, nbytes, stream):
    checked(driver.cuMemcpyHtoDAsync(dptr + offset, array.ctypes.data + offset, nbytes, stream.handle))


def copy_to_host(array, dptr, offset, nbytes, stream):
    checked(driver.cuMemcpyDtoHAsync(array.ctypes.data + offset, dptr + offset, nbytes, stream.handle))


def memset(dptr, value, nbytes, stream):
    checked(driver.cuMemsetD8Async(dptr, value, nbytes, stream.handle))


def launch(kernel, grid, block, shared, stream, args, cooperative=False):
    if not cooperative:
        config = LaunchConfig(grid=grid, block=block, shmem_size=shared)
    else:
        # A cooperative launch, so that grid.sync() works.
        try:
            config = LaunchConfig(grid=grid, block=block, shmem_size=shared, cooperative_launch=True)
        except TypeError:
            raise SystemExit("this kernel needs a cooperative launch (grid.sync()), which cuda.core has "
                             "from version 0.3 on (LaunchConfig's cooperative_launch); this one has none")
    launch_kernel(stream, config, kernel, *args)



def l2_cache_bytes():
    return device.properties.l2_cache_size
)PY");
}

// Texture and surface objects, written once per API like the other helpers:
// a CUDA array per binding, made with the descriptor values the worker uses
// (run/texturedesc), filled from its buffer before every launch that binds it.
const char *kCuPyTextureHelper = R"PY(

class Texture:
    """A CUDA array and a texture or surface object over it (cupy.cuda.texture), made as
    the playground makes them; copy() fills the array from a buffer or a surface's
    array back into it."""

    def __init__(self, bits, kind, extent, component, surface=False, address=(), linear=False,
                 normalized_float=False, normalized_coords=False, border=(0.0, 0.0, 0.0, 0.0)):
        rt = cp.cuda.runtime
        kinds = {"float": rt.cudaChannelFormatKindFloat, "signed": rt.cudaChannelFormatKindSigned,
                 "unsigned": rt.cudaChannelFormatKindUnsigned}
        self.channels = sum(1 for b in bits if b)
        self.component = np.dtype(component)
        self.extent = extent  # elements along x, y, z; 0 for an axis the array does not have
        desc = cp.cuda.texture.ChannelFormatDescriptor(*bits, kinds[kind])
        self.array = cp.cuda.texture.CUDAarray(desc, *extent, rt.cudaArraySurfaceLoadStore if surface else 0)
        resource = cp.cuda.texture.ResourceDescriptor(rt.cudaResourceTypeArray, cuArr=self.array)
        if surface:
            self.object = cp.cuda.texture.SurfaceObject(resource)
        else:
            modes = {"clamp": rt.cudaAddressModeClamp, "wrap": rt.cudaAddressModeWrap,
                     "mirror": rt.cudaAddressModeMirror, "border": rt.cudaAddressModeBorder}
            texture = cp.cuda.texture.TextureDescriptor(
                addressModes=[modes[m] for m in address],
                filterMode=rt.cudaFilterModeLinear if linear else rt.cudaFilterModePoint,
                readMode=rt.cudaReadModeNormalizedFloat if normalized_float else rt.cudaReadModeElementType,
                borderColors=list(border), normalizedCoords=1 if normalized_coords else 0)
            self.object = cp.cuda.texture.TextureObject(resource, texture)

    def handle(self):
        """The cudaTextureObject_t / cudaSurfaceObject_t a kernel takes."""
        return np.uint64(self.object.ptr)

    def copy(self, dptr, to_array, stream):
        """The buffer at dptr into the array (to_array), or the array back into the buffer."""
        width, height, depth = self.extent
        shape = tuple(n for n in (depth, height) if n) + (width * self.channels,)
        nbytes = int(np.prod(shape)) * self.component.itemsize
        memory = cp.cuda.UnownedMemory(dptr, nbytes, None)
        view = cp.ndarray(shape, self.component, cp.cuda.MemoryPointer(memory, 0))
        if to_array:
            self.array.copy_from(view, stream)
        else:
            self.array.copy_to(view, stream)
)PY";

const char *kCudaPythonTextureHelper = R"PY(

class Texture:
    """A CUDA array and a texture or surface object over it (the driver API through
    cuda.bindings), made with the descriptor values the playground uses; copy() fills
    the array from a buffer or a surface's array back into it."""

    def __init__(self, array_format, channels, extent, element_bytes, surface=False, address=(),
                 filter_mode=None, flags=0, border=(0.0, 0.0, 0.0, 0.0)):
        self.extent = extent  # elements along x, y, z; 0 for an axis the array does not have
        self.element_bytes = element_bytes
        desc = driver.CUDA_ARRAY3D_DESCRIPTOR()
        desc.Width, desc.Height, desc.Depth = extent
        desc.Format = array_format
        desc.NumChannels = channels
        desc.Flags = driver.CUDA_ARRAY3D_SURFACE_LDST if surface else 0
        self.array = checked(driver.cuArray3DCreate(desc))
        resource = driver.CUDA_RESOURCE_DESC()
        resource.resType = driver.CUresourcetype.CU_RESOURCE_TYPE_ARRAY
        resource.res.array.hArray = self.array
        if surface:
            self.object = checked(driver.cuSurfObjectCreate(resource))
        else:
            texture = driver.CUDA_TEXTURE_DESC()
            texture.addressMode = list(address)
            texture.filterMode = filter_mode
            texture.flags = flags
            texture.borderColor = list(border)
            self.object = checked(driver.cuTexObjectCreate(resource, texture, None))

    def handle(self):
        """The CUtexObject / CUsurfObject a kernel takes."""
        return np.uint64(int(self.object))

    def copy(self, dptr, to_array, stream):
        """The buffer at dptr into the array (to_array), or the array back into the buffer."""
        width, height, depth = self.extent
        copy = driver.CUDA_MEMCPY3D()
        copy.WidthInBytes = width * self.element_bytes
        copy.Height = max(height, 1)
        copy.Depth = max(depth, 1)
        if to_array:
            copy.srcMemoryType = driver.CUmemorytype.CU_MEMORYTYPE_DEVICE
            copy.srcDevice = dptr
            copy.srcPitch = copy.WidthInBytes
            copy.srcHeight = copy.Height
            copy.dstMemoryType = driver.CUmemorytype.CU_MEMORYTYPE_ARRAY
            copy.dstArray = self.array
        else:
            copy.srcMemoryType = driver.CUmemorytype.CU_MEMORYTYPE_ARRAY
            copy.srcArray = self.array
            copy.dstMemoryType = driver.CUmemorytype.CU_MEMORYTYPE_DEVICE
            copy.dstDevice = dptr
            copy.dstPitch = copy.WidthInBytes
            copy.dstHeight = copy.Height
        checked(driver.cuMemcpy3DAsync(copy, stream.handle))
)PY";

QString cuArrayFormatName(CUarray_format f)
{
    switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT8: return QStringLiteral("CU_AD_FORMAT_UNSIGNED_INT8");
    case CU_AD_FORMAT_UNSIGNED_INT16: return QStringLiteral("CU_AD_FORMAT_UNSIGNED_INT16");
    case CU_AD_FORMAT_UNSIGNED_INT32: return QStringLiteral("CU_AD_FORMAT_UNSIGNED_INT32");
    case CU_AD_FORMAT_SIGNED_INT8: return QStringLiteral("CU_AD_FORMAT_SIGNED_INT8");
    case CU_AD_FORMAT_SIGNED_INT16: return QStringLiteral("CU_AD_FORMAT_SIGNED_INT16");
    case CU_AD_FORMAT_SIGNED_INT32: return QStringLiteral("CU_AD_FORMAT_SIGNED_INT32");
    case CU_AD_FORMAT_HALF: return QStringLiteral("CU_AD_FORMAT_HALF");
    default: return QStringLiteral("CU_AD_FORMAT_FLOAT");
    }
}

const char *kCheckHelper = R"PY(
def ordered_bits(values, kind):
    """The bits of floats as integers that count units in the last place."""
    ints = {"f16": np.int16, "bf16": np.int16, "f32": np.int32, "f64": np.int64}[kind]
    v = values.view(ints).astype(np.int64)
    magnitude = v & np.int64(np.iinfo(ints).max)
    return np.where(v < 0, -magnitude, magnitude)


def as_float64(values, kind):
    if kind == "bf16":  # raw bfloat16 bits: the upper half of a float32
        return (values.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return values.astype(np.float64)


def rounded_to(expected, kind):
    if kind == "bf16":  # float32 to bfloat16, round to nearest even
        bits = expected.astype(np.float32).view(np.uint32).astype(np.uint64)
        return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    return expected.astype({"f16": np.float16, "f32": np.float32, "f64": np.float64}[kind])


def check(name, got, expected, kind, atol=0.0, rtol=0.0, ulp=0, nan_ok=False):
    """One check of the project (docs/checks.md): integers exactly; floats pass
    when |got - expected| <= atol + rtol*|expected|, or when they are at most
    ulp units in the last place apart in the buffer's own type."""
    got = np.ascontiguousarray(got).reshape(-1)
    expected = np.ascontiguousarray(expected).reshape(-1)
    if got.size != expected.size:
        print(f"FAIL {name}: {got.size} values, but {expected.size} expected")
        return False
    if kind == "int":
        if got.dtype.kind in "iu" and expected.dtype.kind in "iu":
            bad = got.astype(np.int64) != expected.astype(np.int64)
            if got.dtype == np.uint64 or expected.dtype == np.uint64:
                bad = got.astype(np.uint64) != expected.astype(np.uint64)
        else:
            bad = got.astype(np.float64) != expected.astype(np.float64)
        g, e = got, expected
    else:
        g = as_float64(got, kind)
        e = expected.astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            finite = np.isfinite(g) & np.isfinite(e)
            close = np.abs(g - e) <= atol + rtol * np.abs(e)
            og = ordered_bits(got, kind)
            oe = ordered_bits(rounded_to(e, kind), kind)
            same_sign = (og < 0) == (oe < 0)
            distance = np.where(same_sign, np.abs(og - oe), np.abs(og).astype(np.float64) + np.abs(oe))
            good = finite & (close | (distance <= ulp))
            good |= ~finite & (g == e)  # infinities pass only when equal
            if nan_ok:
                good |= np.isnan(g) & np.isnan(e)
        bad = ~good
    mismatches = int(np.count_nonzero(bad))
    if mismatches == 0:
        print(f"PASS {name} ({got.size} values)")
        return True
    first = int(np.flatnonzero(bad)[0])
    print(f"FAIL {name}: {mismatches} of {got.size} values differ; first at flat index {first}: "
          f"got {g[first]}, expected {e[first]}")
    return False
)PY";

QString checkKind(DType t, bool exact)
{
    if (exact) {
        return QStringLiteral("int");
    }
    switch (dtypeInfo(t).component) {
    case DType::Float16: return QStringLiteral("f16");
    case DType::BFloat16: return QStringLiteral("bf16");
    case DType::Float64: return QStringLiteral("f64");
    default: return QStringLiteral("f32");
    }
}

/** NumPy slices of a region [x, y, z] over an array of shape (outermost first, plus a component axis). */
QString regionSlices(const CheckRegion &r)
{
    QStringList parts;
    for (qsizetype a = r.begin.size() - 1; a >= 0; --a) {
        parts << QStringLiteral("%1:%2").arg(r.begin[a]).arg(r.end[a]);
    }
    return QStringLiteral("[") + parts.join(QStringLiteral(", ")) + QStringLiteral("]");
}

class PyWriter
{
public:
    PyWriter(Plan &plan, ExportTarget target)
        : m_plan(plan)
        , m_target(target)
    {
    }

    void line(const QString &s = {}, int indent = 0)
    {
        m_out += QString(indent * 4, QLatin1Char(' ')) + s + QLatin1Char('\n');
    }
    void comment(const QString &s, int indent = 0) { line(QStringLiteral("# ") + commentText(s), indent); }

    // NVRTC searches no folder by itself; the playground adds the toolkit's
    // include folders (cooperative_groups.h; CUB and libcu++ in include/cccl
    // since CUDA 13) and stand-ins for the C headers NVRTC lacks. The
    // toolkit is looked up where the program runs, not where it was exported.
    void emitNvrtcIncludes()
    {
        line(QStringLiteral("def toolkit_include_dirs():"));
        line(QStringLiteral(
                 "\"\"\"The CUDA Toolkit's include folders: $CUDA_HOME, $CUDA_PATH, else /usr/local/cuda.\"\"\""),
             1);
        line(QStringLiteral("for root in (os.environ.get(\"CUDA_HOME\"), os.environ.get(\"CUDA_PATH\"), "
                            "\"/usr/local/cuda\"):"),
             1);
        line(QStringLiteral("include = pathlib.Path(root or \"\") / \"include\""), 2);
        line(QStringLiteral("if root and (include / \"cuda.h\").is_file():"), 2);
        line(QStringLiteral("return [str(d) for d in (include / \"cccl\", include) if d.is_dir()]"), 3);
        line(QStringLiteral("return []"), 1);
        line();
        line();
        if (!m_plan.nvrtcHeaderDir.isEmpty()) {
            comment(QStringLiteral("%1/: the playground's stand-ins for the C headers NVRTC does not have.")
                        .arg(m_plan.nvrtcHeaderDir));
            line(QStringLiteral("NVRTC_INCLUDE_DIRS = [str(HERE / %1)] + toolkit_include_dirs()")
                     .arg(py(m_plan.nvrtcHeaderDir)));
        } else {
            line(QStringLiteral("NVRTC_INCLUDE_DIRS = toolkit_include_dirs()"));
        }
        line();
    }

    QString argText(const PlanArg &a, const QString &devName) const
    {
        if (a.isBuffer) {
            const QString p = QStringLiteral("%1[%2]").arg(devName, py(a.buffer));
            return a.byteOffset ? QStringLiteral("np.uintp(%1 + %2)").arg(p).arg(a.byteOffset)
                                : QStringLiteral("np.uintp(%1)").arg(p);
        }
        if (a.scalar >= 0) {
            return m_plan.scalars[a.scalar].identifier;
        }
        if (a.structValue >= 0) {
            return m_plan.structValues[a.structValue].identifier;
        }
        if (a.texture >= 0) {
            return QStringLiteral("textures[%1].handle()").arg(a.texture);
        }
        QString v = pyValue(a.valueType, a.bytes);
        const qsizetype hash = v.indexOf(QLatin1String("  #"));
        return hash > 0 ? v.left(hash) : v;
    }

    QString streamExpr(int i) const { return QStringLiteral("streams[%1]").arg(i); }

    // A struct passed by value is its bytes: a NumPy structured dtype with
    // the offsets and size NVRTC gave the struct (probed when exporting), so
    // the padding the compiler put between members is where the kernel expects it.
    void structValues()
    {
        comment(QStringLiteral("--- Structs passed by value, laid out as NVRTC compiled them ----------------------"));
        comment(QStringLiteral("Each dtype has the struct's members at the offsets the compiler chose (its padding "
                               "included) and its sizeof as itemsize:"));
        comment(QStringLiteral("probed with NVRTC when the project was exported; a change to the struct needs a new "
                               "export."));
        if (m_target == ExportTarget::PyCuda) {
            line(QStringLiteral("def struct_value(dtype, values):"));
            line(QStringLiteral("\"\"\"A struct argument: one NumPy structured scalar, which PyCUDA passes as its "
                                "bytes; read-only,"),
                 1);
            line(QStringLiteral("because PyCUDA caches an argument list by its (hashable) values.\"\"\""), 1);
        } else {
            line(QStringLiteral("def struct_value(dtype, values):"));
            line(QStringLiteral("\"\"\"A struct argument: a one-element array of the structured dtype, which "
                                "CuPy passes as the struct's bytes.\"\"\""),
                 1);
        }
        // Zeros first: the padding bytes are zero, as the playground passes them.
        if (m_target == ExportTarget::PyCuda) {
            line(QStringLiteral("value = np.zeros((), dtype=dtype)"), 1);
            line(QStringLiteral("value[()] = values"), 1);
            line(QStringLiteral("value.setflags(write=False)"), 1);
            line(QStringLiteral("return value[()]"), 1);
        } else {
            line(QStringLiteral("value = np.zeros(1, dtype=dtype)"), 1);
            line(QStringLiteral("value[0] = values"), 1);
            line(QStringLiteral("return value"), 1);
        }
        line();
        line();
        QStringList defined;
        for (const PlanStructValue &v : m_plan.structValues) {
            const QString dtype = structDtypeName(v.type);
            if (!defined.contains(dtype)) {
                defined << dtype;
                QStringList names;
                QStringList formats;
                QStringList offsets;
                for (const StructLeaf &l : v.leaves) {
                    names << py(l.path);
                    formats << QStringLiteral("np.") +
                                   (l.isBool ? QStringLiteral("bool_") : numpyComponentName(l.component));
                    offsets << QString::number(l.offset);
                }
                comment(QStringLiteral("%1: %2 bytes, aligned to %3").arg(v.type).arg(v.bytes.size()).arg(v.align));
                line(QStringLiteral("%1 = np.dtype({").arg(dtype));
                line(QStringLiteral("\"names\": [%1],").arg(names.join(QStringLiteral(", "))), 1);
                line(QStringLiteral("\"formats\": [%1],").arg(formats.join(QStringLiteral(", "))), 1);
                line(QStringLiteral("\"offsets\": [%1],").arg(offsets.join(QStringLiteral(", "))), 1);
                line(QStringLiteral("\"itemsize\": %1,").arg(v.bytes.size()), 1);
                line(QStringLiteral("})"));
            }
            QStringList values;
            for (const StructLeaf &l : v.leaves) {
                values << pyLeafValue(l, v.bytes);
            }
            comment(v.written.isEmpty() ? v.where : QStringLiteral("%1: %2").arg(v.where, v.written));
            line(QStringLiteral("%1 = struct_value(%2, (%3%4))")
                     .arg(v.identifier, dtype, values.join(QStringLiteral(", ")),
                          values.size() == 1 ? QStringLiteral(",") : QString()));
        }
        line();
    }

    /** The copies into the arrays of a launch's textures and surfaces (before), or out of its surfaces (after). */
    void textureCopies(const PlanStep &s, const QString &devName, const QString &stream, bool before, int in)
    {
        for (const int texture : textureCopiesOf(m_plan, s, before)) {
            const PlanTexture &t = m_plan.textures[texture];
            line(QStringLiteral("textures[%1].copy(%2[%3], %4, %5)  # %6")
                     .arg(texture)
                     .arg(devName, py(t.buffer), before ? QStringLiteral("True") : QStringLiteral("False"), stream,
                          commentText(before ? QStringLiteral("%1: the buffer into the array").arg(t.spec.describe())
                                             : QStringLiteral("the surface's writes back into %1").arg(t.buffer))),
                 in);
        }
    }

    /** One Texture per binding, with the values the worker's descriptors have (run/texturedesc). */
    Status textureObjects()
    {
        comment(QStringLiteral("--- Texture and surface objects, over CUDA arrays as in the playground ------------"));
        comment(QStringLiteral("Each array is filled from its buffer before every launch that binds it (the "
                               "playground copies only when"));
        comment(QStringLiteral("the buffer changed), and a surface's array is copied back into the buffer after the "
                               "launch."));
        line(QStringLiteral("textures = ["));
        for (const PlanTexture &t : m_plan.textures) {
            const Result<TextureDescriptors> built = buildTextureDescriptors(t.spec, t.dtype, t.shape, t.where);
            if (!built) {
                return built.error();
            }
            const TextureDescriptors &d = *built;
            const DTypeInfo &info = dtypeInfo(t.dtype);
            const QString extent = QStringLiteral("(%1, %2, %3)")
                                       .arg(qulonglong(d.array.Width))
                                       .arg(qulonglong(d.array.Height))
                                       .arg(qulonglong(d.array.Depth));
            comment(QStringLiteral("%1, %2 %3; for %4")
                        .arg(t.spec.describe(), dtypeName(t.dtype), shapeText(t.shape), t.where),
                    1);
            QStringList args;
            if (m_target == ExportTarget::CuPy) {
                const ScalarKind kind = dtypeInfo(info.component).kind;
                QStringList bits;
                for (int c = 0; c < 4; ++c) {
                    bits << QString::number(c < info.components ? info.componentBytes * 8 : 0);
                }
                args << QStringLiteral("(%1)").arg(bits.join(QStringLiteral(", ")))
                     << py(kind == ScalarKind::SignedInt     ? QStringLiteral("signed")
                           : kind == ScalarKind::UnsignedInt ? QStringLiteral("unsigned")
                                                             : QStringLiteral("float"))
                     << extent << QStringLiteral("np.") + numpyComponentName(t.dtype);
                if (t.spec.isSurface()) {
                    args << QStringLiteral("surface=True");
                } else {
                    QStringList modes;
                    for (int axis = 0; axis < 3; ++axis) {
                        modes << py(addressName(t.spec.address[size_t(axis)]));
                    }
                    args << QStringLiteral("address=(%1)").arg(modes.join(QStringLiteral(", ")));
                    args << QStringLiteral("linear=%1")
                                .arg(t.spec.filter == TextureSpec::Filter::Linear ? QStringLiteral("True")
                                                                                  : QStringLiteral("False"));
                    args << QStringLiteral("normalized_float=%1")
                                .arg(t.spec.read == TextureSpec::Read::NormalizedFloat ? QStringLiteral("True")
                                                                                       : QStringLiteral("False"));
                    args << QStringLiteral("normalized_coords=%1")
                                .arg(t.spec.normalizedCoords ? QStringLiteral("True") : QStringLiteral("False"));
                }
            } else {
                args << QStringLiteral("driver.CUarray_format.%1").arg(cuArrayFormatName(d.array.Format))
                     << QString::number(d.array.NumChannels) << extent << QString::number(info.elementBytes());
                if (t.spec.isSurface()) {
                    args << QStringLiteral("surface=True");
                } else {
                    QStringList modes;
                    for (int axis = 0; axis < 3; ++axis) {
                        // The driver's names are the project's, in capitals (run/texturedesc maps them so).
                        modes << QStringLiteral("driver.CUaddress_mode.CU_TR_ADDRESS_MODE_%1")
                                     .arg(addressName(t.spec.address[size_t(axis)]).toUpper());
                    }
                    args << QStringLiteral("address=(%1)").arg(modes.join(QStringLiteral(", ")));
                    args << QStringLiteral("filter_mode=driver.CUfilter_mode.%1")
                                .arg(d.texture.filterMode == CU_TR_FILTER_MODE_LINEAR
                                         ? QStringLiteral("CU_TR_FILTER_MODE_LINEAR")
                                         : QStringLiteral("CU_TR_FILTER_MODE_POINT"));
                    QStringList flags;
                    if (d.texture.flags & CU_TRSF_READ_AS_INTEGER) {
                        flags << QStringLiteral("driver.CU_TRSF_READ_AS_INTEGER");
                    }
                    if (d.texture.flags & CU_TRSF_NORMALIZED_COORDINATES) {
                        flags << QStringLiteral("driver.CU_TRSF_NORMALIZED_COORDINATES");
                    }
                    args << QStringLiteral("flags=%1")
                                .arg(flags.isEmpty() ? QStringLiteral("0") : flags.join(QStringLiteral(" | ")));
                }
            }
            if (!t.spec.isSurface() && t.spec.border != std::array<float, 4>{0, 0, 0, 0}) {
                QStringList border;
                for (float b : t.spec.border) {
                    border << pyNumber(double(b));
                }
                args << QStringLiteral("border=(%1)").arg(border.join(QStringLiteral(", ")));
            }
            line(QStringLiteral("Texture(%1),").arg(args.join(QStringLiteral(", "))), 1);
        }
        line(QStringLiteral("]"));
        line();
        return Unit{};
    }

    void steps(const PlanRun &run, const QString &kernelsName, const QString &devName, int indent)
    {
        const bool streamed = run.usesStreams();
        if (streamed && run.streams.size() > 1) {
            comment(QStringLiteral("Every stream starts after the work queued on the main stream so far."), indent);
            line(QStringLiteral("record(fork, streams[0])"), indent);
            line(QStringLiteral("for s in streams[1:]:"), indent);
            line(QStringLiteral("wait(s, fork)"), indent + 1);
        }
        const bool repeats = run.repeat > 1;
        if (repeats) {
            line(QStringLiteral("for repetition in range(%1):").arg(run.repeat), indent);
            ++indent;
        }
        for (int i = 0; i < run.steps.size();) {
            const PlanStep &s = run.steps[i];
            int same = 1;
            while (i + same < run.steps.size() && run.steps[i + same].sameAs(s)) {
                ++same;
            }
            int in = indent;
            if (same > 1) {
                comment(QStringLiteral("%1 identical launches").arg(same), in);
                line(QStringLiteral("for _ in range(%1):").arg(same), in);
                ++in;
            }
            for (int w : s.waits) {
                line(QStringLiteral("wait(%1, events[%2])  # %3")
                         .arg(streamExpr(s.stream))
                         .arg(w)
                         .arg(commentText(run.events.value(w))),
                     in);
            }
            const QString st = streamExpr(s.stream);
            const QString d = QStringLiteral("%1[%2]").arg(devName, py(s.buffer));
            switch (s.kind) {
            case RunStep::Kind::Kernel: {
                QStringList args;
                for (const PlanArg &a : s.args) {
                    args << argText(a, devName);
                }
                if (!s.label.isEmpty()) {
                    comment(s.label, in);
                }
                textureCopies(s, devName, st, true, in);
                line(QStringLiteral("launch(%1[%2], %3, %4, %5, %6, [%7]%8)")
                         .arg(kernelsName, py(s.kernel), tuple3(s.grid), tuple3(s.block))
                         .arg(s.sharedBytes)
                         .arg(st, args.join(QStringLiteral(", ")),
                              s.cooperative ? QStringLiteral(", cooperative=True") : QString()),
                     in);
                textureCopies(s, devName, st, false, in);
                break;
            }
            case RunStep::Kind::CopyToDevice:
                comment(s.label, in);
                line(QStringLiteral("copy_to_device(%1, host[%2], %3, %4, %5)")
                         .arg(d, py(s.buffer))
                         .arg(s.offset)
                         .arg(s.bytes)
                         .arg(st),
                     in);
                break;
            case RunStep::Kind::CopyToHost:
                comment(s.label, in);
                line(QStringLiteral("copy_to_host(host[%1], %2, %3, %4, %5)")
                         .arg(py(s.buffer), d)
                         .arg(s.offset)
                         .arg(s.bytes)
                         .arg(st),
                     in);
                break;
            case RunStep::Kind::Memset:
                comment(s.label, in);
                line(QStringLiteral("memset(%1 + %2, %3, %4, %5)")
                         .arg(d)
                         .arg(s.offset)
                         .arg(s.memsetValue)
                         .arg(s.bytes)
                         .arg(st),
                     in);
                break;
            case RunStep::Kind::Record:
            case RunStep::Kind::Wait: break;
            }
            if (s.event >= 0) {
                line(QStringLiteral("record(events[%1], %2)  # %3")
                         .arg(s.event)
                         .arg(st, commentText(run.events.value(s.event))),
                     in);
            }
            i += same;
        }
        for (const auto &[a, b] : run.swaps) {
            line(QStringLiteral("%1[%2], %1[%3] = %1[%3], %1[%2]").arg(devName, py(a), py(b)), indent);
        }
        if (repeats) {
            --indent;
        }
        if (streamed && run.streams.size() > 1) {
            comment(QStringLiteral("The main stream waits for every other stream's work."), indent);
            line(QStringLiteral("for s in streams[1:]:"), indent);
            line(QStringLiteral("record(join, s)"), indent + 1);
            line(QStringLiteral("wait(streams[0], join)"), indent + 1);
        }
    }

    Result<QByteArray> write();

private:
    Plan &m_plan;
    ExportTarget m_target;
    QString m_out;
};

Result<QByteArray> PyWriter::write()
{
    const Plan &p = m_plan;
    QStringList notes = p.notes;
    const QString targetName = exportTargetName(m_target);
    line(QStringLiteral("#!/usr/bin/env python3"));
    comment(p.title);
    line(QStringLiteral("#"));
    comment(QStringLiteral("Exported by Kernel Playground from %1 for %2. Run it beside the files it reads:")
                .arg(p.projectFile.isEmpty() ? QStringLiteral("a project") : p.projectFile, targetName));
    QStringList sources;
    for (const PlanModule &m : p.modules) {
        sources << m.file;
    }
    comment(QStringLiteral("    python3 %1").arg(p.programFile));
    comment(QStringLiteral("%1 (the kernel source), inputs/*.npy (the buffers' initial contents) and expected/*.npy")
                .arg(sources.join(QStringLiteral(", "))));
    comment(QStringLiteral("(the values expression and .npy checks compare with). It needs a CUDA GPU, NumPy and %1.")
                .arg(m_target == ExportTarget::PyCuda ? QStringLiteral("PyCUDA (and nvcc)")
                     : m_target == ExportTarget::CuPy ? QStringLiteral("CuPy")
                                                      : QStringLiteral("cuda-python (cuda.core and cuda.bindings)")));
    comment(QStringLiteral("Exit code: 0 when every check passes, 1 otherwise."));
    line();
    line(QStringLiteral("import argparse"));
    if (m_target != ExportTarget::PyCuda) {
        line(QStringLiteral("import os"));
    }
    line(QStringLiteral("import pathlib"));
    line(QStringLiteral("import sys"));
    line(QStringLiteral("import time"));
    line();
    line(QStringLiteral("import numpy as np"));
    m_out += helpersFor(m_target);
    if (!p.textures.isEmpty()) {
        m_out += QString::fromLatin1(m_target == ExportTarget::CuPy ? kCuPyTextureHelper : kCudaPythonTextureHelper);
    }
    line();
    line(QStringLiteral("HERE = pathlib.Path(__file__).resolve().parent"));
    line();

    // Compile options.
    comment(QStringLiteral("--- Compile: the project's options ---------------------------------------------"));
    const bool autoArch = p.arch == QLatin1String("auto");
    QStringList common;
    common << QStringLiteral("-std=%1").arg(p.std);
    if (p.debug) {
        common << QStringLiteral("-G");
    } else if (p.lineInfo) {
        common << QStringLiteral("-lineinfo");
    }
    if (p.fastMath) {
        common << QStringLiteral("--use_fast_math");
    }
    for (const QString &d : p.defines) {
        common << QStringLiteral("-D%1").arg(d);
    }
    const int opt = p.debug ? 0 : p.optLevel;
    if (m_target == ExportTarget::PyCuda) {
        comment(QStringLiteral("The architecture: %1.")
                    .arg(autoArch ? QStringLiteral("auto, PyCUDA picks the GPU's own") : p.arch));
        line(QStringLiteral("ARCH = %1").arg(autoArch ? QStringLiteral("None") : py(p.arch)));
        QStringList nvcc = common;
        nvcc << QStringLiteral("-Xptxas=-O%1").arg(opt);
        if (!p.extra.isEmpty()) {
            comment(QStringLiteral(
                "The project's extra NVRTC options, given to nvcc as they are (most are spelt the same):"));
            nvcc << p.extra;
            notes << QStringLiteral("compile.extra: NVRTC options passed to nvcc unchanged");
        }
        line(QStringLiteral("NVCC_OPTIONS = %1").arg(pyList(nvcc)));
        comment(QStringLiteral(
            "The project's folder (for its headers) and include folders, as on the machine it was exported on."));
        line(QStringLiteral("INCLUDE_DIRS = %1").arg(pyList(p.includeDirs)));
    } else if (m_target == ExportTarget::CuPy) {
        emitNvrtcIncludes();
        QStringList nvrtc = common;
        nvrtc << QStringLiteral("--ptxas-options=-O%1").arg(opt);
        if (!autoArch) {
            nvrtc << QStringLiteral("-arch=%1").arg(p.arch);
        } else {
            comment(QStringLiteral("The architecture is auto: CuPy compiles for the GPU's own."));
        }
        for (const QString &inc : p.includeDirs) {
            nvrtc << QStringLiteral("-I%1").arg(inc);
        }
        nvrtc << p.extra;
        comment(QStringLiteral(
            "-I: the project's folder (for its headers) and include folders, as on the machine it was exported on;"));
        comment(QStringLiteral("then the stand-in C headers and the toolkit's, found where this program runs."));
        line(QStringLiteral("NVRTC_OPTIONS = %1 + [\"-I\" + d for d in NVRTC_INCLUDE_DIRS]").arg(pyList(nvrtc)));
    } else {
        emitNvrtcIncludes();
        line(QStringLiteral("ARCH = %1  # None: the GPU's own (the project's arch is %2)")
                 .arg(autoArch ? QStringLiteral("None") : py(p.arch), commentText(p.arch)));
        QStringList defs;
        for (const QString &d : p.defines) {
            defs << d;
        }
        QStringList kw;
        kw << QStringLiteral("std=%1").arg(py(p.std));
        kw << QStringLiteral("lineinfo=%1")
                  .arg(p.lineInfo && !p.debug ? QStringLiteral("True") : QStringLiteral("False"));
        kw << QStringLiteral("debug=%1").arg(p.debug ? QStringLiteral("True") : QStringLiteral("False"));
        kw << QStringLiteral("use_fast_math=%1").arg(p.fastMath ? QStringLiteral("True") : QStringLiteral("False"));
        kw << QStringLiteral("ptxas_options=%1").arg(py(QStringLiteral("-O%1").arg(opt)));
        if (!defs.isEmpty()) {
            kw << QStringLiteral("define_macro=%1").arg(pyList(defs));
        }
        kw << QStringLiteral("include_path=%1 + NVRTC_INCLUDE_DIRS").arg(pyList(p.includeDirs));
        line(QStringLiteral("PROGRAM_OPTIONS = dict(%1)").arg(kw.join(QStringLiteral(", "))));
        if (!p.extra.isEmpty()) {
            comment(
                QStringLiteral("Not expressed: ProgramOptions has no field for the project's extra NVRTC options %1")
                    .arg(p.extra.join(QLatin1Char(' '))));
            notes << QStringLiteral("compile.extra: not passed (cuda.core's ProgramOptions takes named options only)");
        }
    }
    line();
    comment(QStringLiteral("The kernels each run launches, by the names the project gives them."));
    for (int mi = 0; mi < p.modules.size(); ++mi) {
        const PlanModule &m = p.modules[mi];
        QStringList entries;
        for (const PlanKernel &k : m.kernels) {
            QString symbol;
            if (m_target == ExportTarget::PyCuda) {
                if (k.symbol.isEmpty()) {
                    return Error{QStringLiteral("export"),
                                 Error::Code::BadInput,
                                 {},
                                 QStringLiteral("pycuda: kernel '%1' has C++ linkage, and PyCUDA looks kernels up by "
                                                "their mangled names, which come from compiling the project with "
                                                "NVRTC; compile it first (kpg export does when NVRTC is available), "
                                                "or declare the kernel extern \"C\"")
                                     .arg(k.name)};
                }
                symbol = py(k.symbol);
            } else {
                symbol = k.externC ? py(k.name) : QStringLiteral("None");
            }
            entries << QStringLiteral("%1: %2").arg(py(k.name), symbol);
        }
        const QString var =
            mi == p.run.module ? QStringLiteral("module, kernels") : QStringLiteral("ref_module, ref_kernels");
        comment(QStringLiteral("%1 (%2)").arg(m.file, m.shownName));
        QStringList instances;
        for (const PlanKernel &k : m.kernels) {
            if (m_target == ExportTarget::PyCuda && k.name.contains(QLatin1Char('<'))) {
                instances << QStringLiteral("(void *)&%1").arg(k.name);
            }
        }
        QString extra;
        QString extra2;
        if (!instances.isEmpty()) {
            // Template kernels are compiled only when used; NVRTC's name expressions do that for the
            // playground, and here the address of each instance does it for nvcc.
            comment(QStringLiteral("PyCUDA has no name expressions: taking each template instance's address makes "
                                   "nvcc compile it."));
            const QString instanceVar =
                mi == p.run.module ? QStringLiteral("INSTANCES") : QStringLiteral("REF_INSTANCES");
            line(QStringLiteral("%1 = %2").arg(instanceVar, py(QStringLiteral("\nvoid *exported_instances_[] = {%1};\n")
                                                                   .arg(instances.join(QStringLiteral(", "))))));
            extra = QStringLiteral(" + ") + instanceVar;
        }
        // CuPy makes a kernel cooperative with its module, not at the launch.
        QStringList cooperative;
        for (const PlanRun *run : {&p.run, p.reference ? &*p.reference : nullptr}) {
            for (const PlanStep &s : run ? run->steps : QList<PlanStep>{}) {
                if (m_target == ExportTarget::CuPy && run->module == mi && s.kind == RunStep::Kind::Kernel &&
                    s.cooperative && !cooperative.contains(py(s.kernel))) {
                    cooperative << py(s.kernel);
                }
            }
        }
        if (!cooperative.isEmpty()) {
            for (const PlanBuffer &b : p.buffers) {
                if (!b.symbol.isEmpty()) {
                    return Error{QStringLiteral("export"),
                                 Error::Code::BadInput,
                                 {},
                                 QStringLiteral("cupy: buffer '%1' is the device variable '%2', and kernel %3 is "
                                                "launched cooperatively, which CuPy does from a second module with "
                                                "variables of its own; export for cuda-python or cuda-cpp")
                                     .arg(b.name, b.symbol, cooperative.first())};
                }
            }
            extra2 = QStringLiteral(", cooperative=(%1,)").arg(cooperative.join(QStringLiteral(", ")));
        }
        line(QStringLiteral("%1 = compile_module((HERE / %2).read_text()%3, {%4}%5)")
                 .arg(var, py(m.file), extra, entries.join(QStringLiteral(", ")), extra2));
    }
    if (p.reference && p.reference->module == p.run.module) {
        line(QStringLiteral("ref_module, ref_kernels = module, kernels"));
    }
    bool bigShared = false;
    for (const PlanRun *run : {&p.run, p.reference ? &*p.reference : nullptr}) {
        if (!run) {
            continue;
        }
        for (const PlanStep &s : run->steps) {
            if (s.kind == RunStep::Kind::Kernel && s.cooperative && m_target == ExportTarget::PyCuda) {
                return Error{QStringLiteral("export"),
                             Error::Code::BadInput,
                             {},
                             QStringLiteral("pycuda: kernel '%1' is launched cooperatively (grid.sync()), which "
                                            "cannot be exported yet for PyCUDA: it has no cooperative launch; export "
                                            "for cupy, cuda-python or cuda-cpp")
                                 .arg(s.kernel)};
            }
            if (s.kind == RunStep::Kind::Kernel && s.sharedBytes > 48 * 1024) {
                if (m_target == ExportTarget::CudaPython) {
                    return Error{QStringLiteral("export"),
                                 Error::Code::BadInput,
                                 {},
                                 QStringLiteral("cuda-python: kernel '%1' asks for %2 bytes of dynamic shared memory, "
                                                "more than 48 KiB, and this export does not set the opt-in attribute "
                                                "through cuda.core; export for cupy or cuda-cpp")
                                     .arg(s.kernel)
                                     .arg(s.sharedBytes)};
                }
                if (!bigShared) {
                    comment(QStringLiteral("More than 48 KiB of dynamic shared memory needs the kernel's opt-in."));
                }
                bigShared = true;
                line(QStringLiteral("allow_shared(%1[%2], %3)")
                         .arg(run == &p.run ? QStringLiteral("kernels") : QStringLiteral("ref_kernels"), py(s.kernel))
                         .arg(s.sharedBytes));
            }
        }
    }
    line();

    comment(QStringLiteral("--- Scalars, with the project's exact types --------------------------------------"));
    for (const PlanScalar &s : p.scalars) {
        if (s.identifier != s.name) {
            comment(QStringLiteral("scalar '%1' (renamed: the name means something else in Python)").arg(s.name));
        }
        line(QStringLiteral("%1 = %2").arg(s.identifier, pyValue(s.type, s.bytes)));
    }
    line();
    if (!p.structValues.isEmpty()) {
        structValues();
    }

    comment(QStringLiteral("--- Buffers: the project's exact initial contents --------------------------------"));
    line(QStringLiteral("host = {}"));
    QStringList upload;
    for (const PlanBuffer &b : p.buffers) {
        const DTypeInfo &info = dtypeInfo(b.dtype);
        QList<qint64> shape = b.shape;
        if (info.components > 1) {
            shape << info.components;
        }
        QStringList dims;
        for (qint64 d : shape) {
            dims << QString::number(d);
        }
        const QString shapeTuple = QStringLiteral("(%1%2)").arg(dims.join(QStringLiteral(", ")),
                                                                dims.size() == 1 ? QStringLiteral(",") : QString());
        const QString what = QStringLiteral("%1 %2: %3").arg(dtypeName(b.dtype), shapeText(b.shape), b.initText);
        comment(what);
        if (!b.inputFile.isEmpty()) {
            line(QStringLiteral("host[%1] = np.load(HERE / %2)").arg(py(b.name), py(b.inputFile)));
        } else {
            line(QStringLiteral("host[%1] = np.zeros(%2, dtype=np.%3)")
                     .arg(py(b.name), shapeTuple, numpyComponentName(b.dtype)));
        }
        if (!b.uninitialized) {
            upload << b.name;
        }
    }
    line(QStringLiteral("for name in host:"));
    line(QStringLiteral("host[name] = pin(host[name])"), 1);
    comment(QStringLiteral("Uploaded before a run (an uninitialized buffer is allocated only, as with cudaMalloc)."));
    line(QStringLiteral("UPLOAD = %1").arg(pyList(upload)));
    QStringList symbols;
    for (const PlanBuffer &b : p.buffers) {
        if (!b.symbol.isEmpty()) {
            symbols << QStringLiteral("%1: %2").arg(py(b.name), py(b.ptxSymbol));
        }
    }
    if (!symbols.isEmpty()) {
        comment(QStringLiteral("Buffers that are a __constant__ or __device__ variable of the kernel source: the "
                               "variable's memory,"));
        comment(QStringLiteral("as in the playground, filled and read back by the same copies as the others."));
        line(QStringLiteral("SYMBOLS = {%1}").arg(symbols.join(QStringLiteral(", "))));
    }
    line();

    comment(QStringLiteral("--- Streams and events ----------------------------------------------------------"));
    const PlanRun &run = p.run;
    QStringList streamItems;
    for (const PlanStream &s : run.streams) {
        streamItems << QStringLiteral("new_stream(%1%2),  # %3")
                           .arg(s.priority)
                           .arg(s.legacy ? QStringLiteral(", legacy=True") : QString())
                           .arg(commentText(
                               s.name + (s.priority ? QStringLiteral(", priority %1").arg(s.priority) : QString())));
    }
    line(QStringLiteral("streams = ["));
    for (const QString &s : streamItems) {
        line(s, 1);
    }
    line(QStringLiteral("]"));
    if (m_target == ExportTarget::PyCuda) {
        for (const PlanStream &s : run.streams) {
            if (s.priority != 0) {
                notes << QStringLiteral("streams: PyCUDA creates streams without priorities");
                break;
            }
        }
    }
    if (run.streams.first().legacy) {
        return Error{QStringLiteral("export"),
                     Error::Code::BadInput,
                     {},
                     QStringLiteral("the main stream cannot be the legacy stream")};
    }
    line(QStringLiteral("events = [new_event() for _ in range(%1)]%2")
             .arg(run.events.size())
             .arg(run.events.isEmpty() ? QString()
                                       : QStringLiteral("  # ") + commentText(run.events.join(QStringLiteral(", ")))));
    line(QStringLiteral("fork, join = new_event(), new_event()"));
    line();
    if (!p.textures.isEmpty()) {
        if (const Status made = textureObjects(); !made) {
            return made.error();
        }
    }

    comment(QStringLiteral("--- The project's launch steps, in order ------------------------------------------"));
    line();
    line();
    line(QStringLiteral("def run_steps(dev):"));
    line(run.repeat > 1
             ? QStringLiteral("\"\"\"Queues every step %1 times, each repetition followed by the swaps.\"\"\"")
                   .arg(run.repeat)
             : QStringLiteral("\"\"\"Queues every step once.\"\"\""),
         1);
    steps(run, QStringLiteral("kernels"), QStringLiteral("dev"), 1);
    if (p.reference) {
        line();
        line();
        line(QStringLiteral("def run_reference(dev):"));
        line(QStringLiteral("\"\"\"The project's reference: the trusted run reference checks compare with.\"\"\""), 1);
        steps(*p.reference, QStringLiteral("ref_kernels"), QStringLiteral("dev"), 1);
    }
    line();
    line();
    if (symbols.isEmpty()) {
        line(QStringLiteral("def allocate_and_upload():"));
        line(QStringLiteral("dev = {name: alloc(array.nbytes) for name, array in host.items()}"), 1);
    } else {
        line(QStringLiteral("def allocate_and_upload(module):"));
        line(QStringLiteral("\"\"\"The module's own variables (each module has its own) or fresh allocations.\"\"\""),
             1);
        line(QStringLiteral("dev = {name: symbol_address(module, SYMBOLS[name], array.nbytes) if name in SYMBOLS"), 1);
        line(QStringLiteral("       else alloc(array.nbytes) for name, array in host.items()}"), 1);
    }
    line(QStringLiteral("for name in UPLOAD:"), 1);
    line(QStringLiteral("copy_to_device(dev[name], host[name], 0, host[name].nbytes, streams[0])"), 2);
    line(QStringLiteral("return dev"), 1);
    line();
    line();
    line(QStringLiteral("def download(dev):"));
    line(QStringLiteral("out = {name: np.empty_like(array) for name, array in host.items()}"), 1);
    line(QStringLiteral("for name in out:"), 1);
    line(QStringLiteral("copy_to_host(out[name], dev[name], 0, out[name].nbytes, streams[0])"), 2);
    line(QStringLiteral("sync(streams[0])"), 1);
    line(QStringLiteral("return out"), 1);
    line();
    m_out += QString::fromLatin1(kCheckHelper);
    line();
    line();
    line(QStringLiteral("def main():"));
    int in = 1;
    line(QStringLiteral("parser = argparse.ArgumentParser(description=%1)").arg(py(p.title)), in);
    line(QStringLiteral(
             "parser.add_argument(\"--no-timing\", action=\"store_true\", help=\"run once, without timing\")"),
         in);
    line(QStringLiteral("parser.add_argument(\"--save-buffers\", metavar=\"DIR\", help=\"write every buffer after the "
                        "run to DIR/NAME.npy\")"),
         in);
    line(QStringLiteral("args = parser.parse_args()"), in);
    if (p.reference) {
        comment(
            QStringLiteral("The reference runs first, on the initial contents (copy steps may write the host arrays)."),
            in);
        line(symbols.isEmpty() ? QStringLiteral("ref_dev = allocate_and_upload()")
                               : QStringLiteral("ref_dev = allocate_and_upload(ref_module)"),
             in);
        line(QStringLiteral("run_reference(ref_dev)"), in);
        line(QStringLiteral("reference = download(ref_dev)"), in);
    }
    comment(QStringLiteral("The run the checks judge: upload, every step, download."), in);
    line(symbols.isEmpty() ? QStringLiteral("dev = allocate_and_upload()")
                           : QStringLiteral("dev = allocate_and_upload(module)"),
         in);
    line(QStringLiteral("run_steps(dev)"), in);
    line(QStringLiteral("after = download(dev)"), in);
    line(QStringLiteral("if args.save_buffers:"), in);
    line(QStringLiteral("folder = pathlib.Path(args.save_buffers)"), in + 1);
    line(QStringLiteral("folder.mkdir(parents=True, exist_ok=True)"), in + 1);
    line(QStringLiteral("for name, array in after.items():"), in + 1);
    line(QStringLiteral("np.save(folder / (name + \".npy\"), array)"), in + 2);
    line();
    comment(QStringLiteral("--- Checks, with the project's tolerances -------------------------------------"), in);
    line(QStringLiteral("ok = True"), in);
    for (const PlanCheck &c : p.checks) {
        const PlanBuffer *buf = nullptr;
        for (const PlanBuffer &b : p.buffers) {
            buf = b.name == c.buffer ? &b : buf;
        }
        const QString slices = c.region ? regionSlices(*c.region) : QString();
        const QString got = QStringLiteral("after[%1]%2").arg(py(c.buffer), slices);
        QString expected;
        if (c.kind == CheckSpec::Kind::Reference) {
            expected = QStringLiteral("reference[%1]%2").arg(py(c.reference), slices);
            comment(QStringLiteral("%1: against the reference run's %2").arg(c.name, c.reference), in);
        } else {
            expected =
                QStringLiteral("np.load(HERE / %1)%2").arg(py(c.expectedFile), c.regionInFile ? QString() : slices);
            comment(QStringLiteral("%1: %2 %3 (the expected values computed when exporting)")
                        .arg(c.name,
                             c.kind == CheckSpec::Kind::Npy ? QStringLiteral("file") : QStringLiteral("expected"),
                             c.target),
                    in);
        }
        if (c.seeds > 1) {
            comment(QStringLiteral(
                        "The project runs this check with %1 seeds; this program has the first seed's inputs only.")
                        .arg(c.seeds),
                    in);
        }
        QString args =
            QStringLiteral("%1, %2, %3, %4").arg(py(c.name), got, expected, py(checkKind(buf->dtype, c.exact)));
        if (!c.exact) {
            args += QStringLiteral(", atol=%1, rtol=%2, ulp=%3")
                        .arg(pyNumber(c.tolerance.abs), pyNumber(c.tolerance.rel))
                        .arg(c.tolerance.ulp);
            if (c.nan) {
                args += QStringLiteral(", nan_ok=True");
            }
        }
        line(QStringLiteral("ok = check(%1) and ok").arg(args), in);
    }
    if (p.checks.isEmpty()) {
        comment(QStringLiteral("The project has no checks."), in);
    }
    line();
    comment(QStringLiteral("--- Timing with events ---------------------------------------------------------"), in);
    if (!p.timingEnabled) {
        comment(QStringLiteral("The project has timing switched off."), in);
    } else {
        line(QStringLiteral("if args.no_timing:"), in);
        line(QStringLiteral("return 0 if ok else 1"), in + 1);
        if (p.graph) {
            comment(QStringLiteral("The project also captures the steps into a CUDA graph and times its replay; this "
                                   "program times the steps launched one by one only."),
                    in);
            notes << QStringLiteral("graph: the steps are timed as launched one by one, without a CUDA graph replay");
        }
        comment(QStringLiteral("%1 warm-up run(s); then samples until the relative standard deviation is at most %2 "
                               "(with at least %3 samples and %4 s of GPU time), %5 samples or %6 s.")
                    .arg(p.warmup)
                    .arg(p.maxNoise)
                    .arg(p.minSamples)
                    .arg(p.minSeconds)
                    .arg(p.maxSamples)
                    .arg(p.timeoutSeconds),
                in);
        comment(QStringLiteral("The playground also stops on its entropy criterion and holds the stream while a sample "
                               "is queued; neither is here."),
                in);
        line(QStringLiteral("for _ in range(%1):").arg(p.warmup), in);
        line(QStringLiteral("run_steps(dev)"), in + 1);
        line(QStringLiteral("sync(streams[0])"), in);
        if (p.cold) {
            comment(
                QStringLiteral("Cold: the L2 cache is flushed before each sample by writing a buffer twice its size "
                               "(the playground reads one, which leaves no dirty lines)."),
                in);
            line(QStringLiteral("flush_bytes = 2 * l2_cache_bytes()"), in);
            line(QStringLiteral("flush = alloc(flush_bytes)"), in);
            line(QStringLiteral("batch = 1"), in);
        } else if (p.batch > 0) {
            comment(QStringLiteral("Hot: %1 runs back to back per sample.").arg(p.batch), in);
            line(QStringLiteral("batch = %1").arg(p.batch), in);
        } else {
            comment(QStringLiteral("Hot: enough runs per sample for about 1 ms of work, from one timed run."), in);
            line(QStringLiteral("start, end = new_event(), new_event()"), in);
            line(QStringLiteral("record(start, streams[0])"), in);
            line(QStringLiteral("run_steps(dev)"), in);
            line(QStringLiteral("record(end, streams[0])"), in);
            line(QStringLiteral("sync(streams[0])"), in);
            line(QStringLiteral("batch = int(min(10000, max(1, np.ceil(1.0 / max(elapsed_ms(start, end), 1e-4)))))"),
                 in);
        }
        line(QStringLiteral("start, end = new_event(), new_event()"), in);
        line(QStringLiteral("samples = []"), in);
        line(QStringLiteral("began = time.monotonic()"), in);
        line(QStringLiteral("while True:"), in);
        if (p.cold) {
            line(QStringLiteral("memset(flush, 0, flush_bytes, streams[0])"), in + 1);
        }
        line(QStringLiteral("record(start, streams[0])"), in + 1);
        line(QStringLiteral("for _ in range(batch):"), in + 1);
        line(QStringLiteral("run_steps(dev)"), in + 2);
        line(QStringLiteral("record(end, streams[0])"), in + 1);
        line(QStringLiteral("sync(streams[0])"), in + 1);
        line(QStringLiteral("samples.append(elapsed_ms(start, end) / batch)"), in + 1);
        line(QStringLiteral("taken = len(samples)"), in + 1);
        line(QStringLiteral("quiet = taken >= %1 and sum(samples) * batch / 1000 >= %2 and np.std(samples) <= %3 * "
                            "np.mean(samples)")
                 .arg(p.minSamples)
                 .arg(pyNumber(p.minSeconds), pyNumber(p.maxNoise)),
             in + 1);
        line(QStringLiteral("if quiet or taken >= %1 or time.monotonic() - began > %2:")
                 .arg(p.maxSamples)
                 .arg(pyNumber(p.timeoutSeconds)),
             in + 1);
        line(QStringLiteral("break"), in + 2);
        line(QStringLiteral("print(f\"median {np.median(samples):.6f} ms over {len(samples)} samples\")"), in);
    }
    line(QStringLiteral("return 0 if ok else 1"), in);
    line();
    line();
    line(QStringLiteral("if __name__ == \"__main__\":"));
    line(QStringLiteral("sys.exit(main())"), 1);

    if (!notes.isEmpty()) {
        QString header;
        header += QStringLiteral("\n# What this program does differently from the project:\n");
        for (const QString &n : notes) {
            header += QStringLiteral("#   - ") + commentText(n) + QLatin1Char('\n');
        }
        header += QLatin1Char('\n');
        // A block of its own after the first import line, not glued to its end.
        const qsizetype at = m_out.indexOf(QLatin1String("\nimport pathlib"));
        m_out.insert(at + 1, header);
    }
    m_plan.notes = notes;
    return m_out.toUtf8();
}

} // namespace

Result<QByteArray> emitPython(Plan &plan, ExportTarget target)
{
    PyWriter w(plan, target);
    Result<QByteArray> r = w.write();
    return r;
}

} // namespace Kp::ExportDetail

// The compiler against real NVRTC: diagnostics on the right line and column,
// headers, templates, resources, options, bad input, and the cache.

#include "compile/compiler.h"
#include "compile/logparse.h"
#include "compile/ptxmap.h"
#include "cuda/nvrtcapi.h"

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

using namespace Kp;

class TestCompiler : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_cacheDir;
    std::unique_ptr<Compiler> m_compiler;

    CompileResult compile(const QString &source, CompileOptions options = {}, const QString &dir = {})
    {
        CompileRequest req;
        req.source = source;
        req.fileName = QStringLiteral("kernel.cu");
        req.projectDir = dir;
        options.useCache = false; // each test compiles for real unless it tests the cache
        req.options = options;
        Result<CompileResult> r = m_compiler->compile(req);
        if (!r) {
            qWarning("%s", qPrintable(r.error().toString()));
            return {};
        }
        return r.value();
    }
    static QString dump(const CompileResult &r)
    {
        QStringList l;
        for (const Diagnostic &d : r.diagnostics) {
            l << QStringLiteral("%1:%2:%3 %4: %5")
                     .arg(d.file)
                     .arg(d.line)
                     .arg(d.column)
                     .arg(Diagnostic::severityName(d.severity), d.message);
        }
        return l.join('\n') + "\n--- log ---\n" + r.log;
    }

private Q_SLOTS:
    void initTestCase()
    {
        const auto nv = NvrtcApi::instance();
        if (!nv) {
            QSKIP(qPrintable("NVRTC is not available: " + nv.error().message));
        }
        m_compiler = std::make_unique<Compiler>(Compiler::Config{m_cacheDir.path(), 64 * 1024 * 1024});
    }

    void compilesPreset()
    {
        QFile f(KPG_SOURCE_DIR "/presets/vector_add/vector_add.cu");
        QVERIFY(f.open(QIODevice::ReadOnly));
        const CompileResult r = compile(QString::fromUtf8(f.readAll()));
        QVERIFY2(r.ok, qPrintable(dump(r)));
        QCOMPARE(r.errorCount(), 0);
        QCOMPARE(r.arch, QString("sm_90")); // no device: the default
        QVERIFY(r.ptx.contains(".entry vectorAdd"));
        QVERIFY(r.ptx.contains(".loc")); // -lineinfo is on by default
        QVERIFY(r.cubin.startsWith("\x7f"
                                   "ELF"));
        QCOMPARE(r.kernels.size(), 1);
        const KernelInfo &k = r.kernels[0];
        QCOMPARE(k.loweredName, QString("vectorAdd"));
        QCOMPARE(k.params.size(), 4);
        QVERIFY(k.resources.known);
        QVERIFY(k.resources.registers > 0 && k.resources.registers < 64);
        QCOMPARE(k.resources.spillStores, 0);
        QVERIFY(r.compileMs > 0);
        QVERIFY(!r.cached);
    }

    // C headers NVRTC lacks, given in memory (Compiler::virtualHeaders).
    void cHeaders_data()
    {
        QTest::addColumn<QString>("header");
        QTest::addColumn<QString>("use"); // a statement in a kernel with float *f, int *n
        QTest::newRow("math.h") << "math.h"
                                << "f[0] = sqrtf(f[1]) + expf(f[2]) + fabsf(f[3]);";
        QTest::newRow("cmath") << "cmath"
                               << "f[0] = std::sqrt(f[1]) + std::floor(f[2]) + (std::isnan(f[3]) ? 1 : 0);";
        QTest::newRow("stdlib.h") << "stdlib.h"
                                  << "int *p = (int *)malloc(8); p[0] = abs(n[0]); n[1] = p[0]; free(p);";
        QTest::newRow("cstdlib") << "cstdlib"
                                 << "n[0] = std::abs(n[1]);";
        QTest::newRow("string.h") << "string.h"
                                  << "memcpy(n, n + 4, 8); memset(n + 8, 0, 4);";
        QTest::newRow("cstring") << "cstring"
                                 << "std::memcpy(n, n + 4, 8);";
        QTest::newRow("ctime") << "ctime"
                               << "clock_t t = clock(); n[0] = int(t);";
        QTest::newRow("time.h") << "time.h"
                                << "n[0] = int(clock64());";
        QTest::newRow("climits") << "climits"
                                 << "n[0] = INT_MAX + CHAR_BIT - SHRT_MAX;";
        QTest::newRow("limits.h") << "limits.h"
                                  << "n[0] = INT_MIN;";
        QTest::newRow("cfloat") << "cfloat"
                                << "f[0] = FLT_MAX + FLT_EPSILON + float(DBL_EPSILON);";
        QTest::newRow("float.h") << "float.h"
                                 << "static_assert(FLT_MAX == 3.402823466e+38f && DBL_EPSILON == 0x1p-52 && FLT_MIN == "
                                    "0x1p-126f, \"IEEE\"); f[0] = FLT_MIN;";
    }
    void cHeaders()
    {
        QFETCH(QString, header);
        QFETCH(QString, use);
        const CompileResult r = compile(
            QStringLiteral("#include <%1>\n__global__ void k(float *f, int *n)\n{\n    %2\n}\n").arg(header, use));
        QVERIFY2(r.ok, qPrintable(dump(r)));
        QVERIFY(!r.nvrtcOptions.contains("-default-device"));
    }

    // Issue 29: the log showed NVRTC's "creating precompiled header file
    // /tmp/..." lines to users; they are left out, the rest kept.
    void logWithoutPrecompiledHeaderLines()
    {
        const CompileResult r = compile(QStringLiteral("#include <cuda_fp16.h>\n__global__ void k(float *a) { a[0] = "
                                                       "__half2float(__float2half(a[1])); }\n"));
        QVERIFY2(r.ok, qPrintable(dump(r)));
        QVERIFY(r.nvrtcOptions.contains("-pch")); // NVRTC made or used a precompiled header
        QVERIFY2(!r.log.contains("precompiled header"), qPrintable(r.log));
        QVERIFY2(!r.log.contains(QChar(0)), qPrintable(r.log));
        QVERIFY2(r.log.contains("ptxas info"), qPrintable(r.log));
        QCOMPARE(
            userLog(QStringLiteral("\"k.cu\": creating precompiled header file \"/tmp/x/k_0.pch\"\nptxas info    : "
                                   "0 bytes gmem\n")
                        .append(QChar(0))),
            QStringLiteral("ptxas info    : 0 bytes gmem\n"));
    }

    // Unannotated functions: compiled again with -default-device, and the log says so.
    void defaultDeviceRetry_data()
    {
        QTest::addColumn<QString>("source");
        QTest::addColumn<bool>("ok");
        QTest::addColumn<bool>("retried");
        QTest::addColumn<QString>("firstError");
        QTest::newRow("helper without __device__")
            << "inline float square(float x) { return x * x; }\n__global__ void k(float *a) { a[0] = square(a[0]); }\n"
            << true << true << "";
        QTest::newRow("host prototype in a header-like block")
            << "float hostOnly(float);\nstatic int table(int i) { return i * 3; }\n"
               "__global__ void k(int *a) { a[0] = table(a[0]); }\n"
            << true << true << "";
        QTest::newRow("annotated code is not retried") << "__global__ void k(float *a) { a[0] = 1; }\n"
                                                       << true << false << "";
        // A real error besides: the first compile's error is what the user sees.
        QTest::newRow("real error stays the first compile's")
            << "inline float square(float x) { return x * x; }\n__global__ void k(float *a) { a[0] = squre(a[0]); }\n"
            << false << false
            << "A function without execution space annotations (__host__/__device__/__global__) is considered a host "
               "function";
    }
    void defaultDeviceRetry()
    {
        QFETCH(QString, source);
        QFETCH(bool, ok);
        QFETCH(bool, retried);
        QFETCH(QString, firstError);
        const CompileResult r = compile(source);
        QCOMPARE(r.ok, ok);
        QCOMPARE(r.nvrtcOptions.contains("-default-device"), retried);
        QCOMPARE(r.log.startsWith("note: compiled again with -default-device"), retried);
        bool noted = false;
        for (const Diagnostic &d : r.diagnostics) {
            noted = noted || (d.severity == Diagnostic::Severity::Note && d.message.contains("-default-device"));
        }
        QCOMPARE(noted, retried);
        if (!firstError.isEmpty()) {
            QVERIFY2(r.errorCount() > 0 && r.diagnostics.first().message.startsWith(firstError), qPrintable(dump(r)));
        }
    }

    // Device code from NVIDIA's cuda-samples as its authors wrote it (tests/data/cuda-samples).
    void cudaSamplesAsWritten()
    {
        QFile f(KPG_SOURCE_DIR "/tests/data/cuda-samples/stereoDisparity_kernel.cuh");
        QVERIFY(f.open(QIODevice::ReadOnly));
        const CompileResult r = compile(QString::fromUtf8(f.readAll()));
        QVERIFY2(r.ok, qPrintable(dump(r)));
        QVERIFY(r.nvrtcOptions.contains("-default-device"));
        QVERIFY(r.ptx.contains(".entry _Z21stereoDisparityKernel"));
    }

    void brokenKernels_data()
    {
        QTest::addColumn<QString>("source");
        QTest::addColumn<int>("line");
        QTest::addColumn<int>("column");
        QTest::addColumn<QString>("severity");
        QTest::addColumn<QString>("message");
        auto row = [](const char *tag, const char *src, int line, int col, const char *sev, const char *msg) {
            QTest::newRow(tag) << QString::fromUtf8(src) << line << col << QString(sev) << QString::fromUtf8(msg);
        };
        row("missing semicolon", "__global__ void k(float *a)\n{\n    int i = threadIdx.x\n    a[i] = 1.0f;\n}\n", 4, 5,
            "error", "expected a \";\"");
        row("undefined identifier", "__global__ void k(float *a)\n{\n    a[0] = undefined_thing;\n}\n", 3, 12, "error",
            "identifier \"undefined_thing\" is undefined");
        row("misspelt type", "__global__ void k(float *a)\n{\n    flaot x = 1;\n    a[0] = x;\n}\n", 3, 5, "error",
            "identifier \"flaot\" is undefined");
        row("undefined function", "__global__ void k(float *a)\n{\n\n    a[0] = foo(1);\n}\n", 4, 12, "error",
            "identifier \"foo\" is undefined");
        row("bad initialiser", "__global__ void k(float *a)\n{\n    float *p = 1.0f;\n    a[0] = *p;\n}\n", 3, 16,
            "error", "cannot be used to initialize an entity of type \"float *\"");
        row("return value in kernel", "__global__ void k(float *a)\n{\n    a[0] = 1;\n    return 1;\n}\n", 4, 12,
            "error", "return value type does not match the function type");
        // NVRTC points at the start of the declaration here.
        row("non-void kernel", "__global__ int k(float *a)\n{\n    return 0;\n}\n", 1, 1, "error",
            "must have a void return type");
        row("shared initialiser", "__global__ void k(float *a)\n{\n    __shared__ float s = 1.0f;\n    a[0] = s;\n}\n",
            3, 22, "error", "initializer not allowed for __shared__ variable");
        row("no operator for float4", "__global__ void k(float4 *a)\n{\n    a[0] = a[1] + a[2];\n}\n", 3, 17, "error",
            "no operator \"+\" matches these operands");
        row("assign to const", "__global__ void k(int *a)\n{\n    const int c = 1;\n    c = 2;\n    a[0] = c;\n}\n", 4,
            5, "error", "expression must be a modifiable lvalue");
        row("unused variable", "__global__ void k(int *a)\n{\n    int unused;\n    a[0] = 1;\n}\n", 3, 9, "warning",
            "variable \"unused\" was declared but never referenced");
        row("error directive", "\n\n#error stop here\n__global__ void k(int *a) {}\n", 3, 2, "error", "stop here");
        row("missing define", "__global__ void k(int *a)\n{\n    a[0] = BLOCK_SIZE;\n}\n", 3, 12, "error",
            "identifier \"BLOCK_SIZE\" is undefined");
        row("void pointer arithmetic", "__global__ void k(void *v)\n{\n    v++;\n}\n", 3, 5, "error",
            "must be a pointer to a complete object type");
        row("too many arguments",
            "__device__ int f(int x) { return x; }\n__global__ void k(int *a)\n{\n    a[0] = f(1, 2);\n}\n", 4, 17,
            "error", "too many arguments in function call");
        // The caret sits after the file name.
        row("missing include", "#include \"does_not_exist.cuh\"\n__global__ void k(int *a) {}\n", 1, 30, "error",
            "cannot open source file \"does_not_exist.cuh\"");
        row("tab indented", "__global__ void k(int *a)\n{\n\ta[0] = nothing;\n}\n", 3, 9, "error",
            "identifier \"nothing\" is undefined");
    }
    void brokenKernels()
    {
        QFETCH(QString, source);
        QFETCH(int, line);
        QFETCH(int, column);
        QFETCH(QString, severity);
        QFETCH(QString, message);
        const CompileResult r = compile(source);
        bool found = false;
        for (const Diagnostic &d : r.diagnostics) {
            if (d.message.contains(message)) {
                found = true;
                QCOMPARE(d.file, QString("kernel.cu"));
                QCOMPARE(Diagnostic::severityName(d.severity), severity);
                QCOMPARE(d.line, line);
                QCOMPARE(d.column, column);
            }
        }
        QVERIFY2(found, qPrintable(dump(r)));
        QCOMPARE(r.ok, severity != "error");
    }

    // Errors NVRTC prints without a file(line): prefix still count: a failed
    // compile never reports 0 errors.
    void unlocatedErrors_data()
    {
        QTest::addColumn<QString>("source");
        QTest::addColumn<QStringList>("defines");
        QTest::addColumn<QString>("message");
        QTest::newRow("unclosed parenthesis at end of source")
            << "__global__ void k(int *a)\n{\n    a[0] = (1 + 2;\n}\n"
            << QStringList{} << "expected a \")\"";
        QTest::newRow("unclosed brace at end of source")
            << "__global__ void k(int *a)\n{\n    if (a) {\n        a[0] = 1;\n}\n"
            << QStringList{} << "At end of source";
        QTest::newRow("invalid macro definition") << "__global__ void k(int *a) { a[0] = 1; }\n"
                                                  << QStringList{"1X=2"} << "1X";
    }

    void unlocatedErrors()
    {
        QFETCH(QString, source);
        QFETCH(QStringList, defines);
        QFETCH(QString, message);
        CompileOptions o;
        o.defines = defines;
        const CompileResult r = compile(source, o);
        QVERIFY(!r.ok);
        QVERIFY2(r.errorCount() > 0, qPrintable(r.log));
        bool found = false;
        for (const Diagnostic &d : r.diagnostics) {
            found = found || (d.severity == Diagnostic::Severity::Error && d.message.contains(message));
        }
        QVERIFY2(found, qPrintable(r.log));
    }

    // A kernel file on disk is compiled under its absolute path, so the line
    // info names a file tools can open (ncu's source page); the user's messages
    // and log still name it as the editor does. A path that cannot go into the
    // PTX's .file directive as it is falls back to the short name.
    void sourcePathNamesTheProgram_data()
    {
        QTest::addColumn<QString>("sourcePath");
        QTest::addColumn<bool>("used");
        QTest::newRow("absolute") << "/home/student/lab 1/transpose.cu" << true;
        QTest::newRow("relative") << "lab/transpose.cu" << false;
        QTest::newRow("a quote") << "/home/x/\"q\".cu" << false;
        QTest::newRow("a backslash") << "/home/x/a\\b.cu" << false;
        QTest::newRow("a newline") << "/home/x/a\nb.cu" << false;
        QTest::newRow("not ASCII") << QString::fromUtf8("/home/\xc3\xa9l\xc3\xa8ve/k.cu") << false;
    }

    void sourcePathNamesTheProgram()
    {
        QFETCH(QString, sourcePath);
        QFETCH(bool, used);
        CompileRequest req;
        req.source = "__global__ void k(float *a)\n{\n    a[threadIdx.x] = 2.0f;\n    int unused = 3;\n}\n";
        req.fileName = QStringLiteral("transpose.cu");
        req.sourcePath = sourcePath;
        req.options.useCache = false;
        QCOMPARE(Compiler::programName(req), used ? sourcePath : req.fileName);
        const Result<CompileResult> r = m_compiler->compile(req);
        QVERIFY2(r, qPrintable(r ? QString() : r.error().toString()));
        QVERIFY2(r->ok, qPrintable(dump(*r)));
        // NVRTC puts its own working folder before a relative name.
        static const QRegularExpression fileDirective(QStringLiteral("\\.file\\s+\\d+\\s+\"([^\"]*)\""));
        const QString named = fileDirective.match(QString::fromLatin1(r->ptx)).captured(1);
        if (used) {
            QCOMPARE(named, sourcePath);
        } else {
            QVERIFY2(named == req.fileName || named.endsWith(QStringLiteral("/transpose.cu")), qPrintable(named));
        }
        // The warning about `unused` names the short file, on its line.
        bool warned = false;
        for (const Diagnostic &d : r->diagnostics) {
            if (d.message.contains(QLatin1String("unused"))) {
                warned = true;
                QCOMPARE(d.file, req.fileName);
                QCOMPARE(d.line, 4);
            }
        }
        QVERIFY2(warned, qPrintable(dump(*r)));
        QVERIFY2(!used || !r->log.contains(sourcePath), qPrintable(r->log));
        // The PTX still maps back to the user's lines by the short name.
        QVERIFY(!PtxLineMap(r->ptx, req.fileName).ptxLines(3, 3).isEmpty());
    }

    void headers_data()
    {
        QTest::addColumn<QString>("include");
        QTest::addColumn<QString>("use");
        QTest::newRow("cstdint") << "<cstdint>"
                                 << "std::uint32_t x = 1; int64_t y = x; p[0] = float(y);";
        QTest::newRow("stdint.h") << "<stdint.h>"
                                  << "uint8_t x = 3; p[0] = x;";
        QTest::newRow("cassert") << "<cassert>"
                                 << "assert(p != nullptr); p[0] = 1;";
        QTest::newRow("assert.h") << "<assert.h>"
                                  << "assert(threadIdx.x < 1024); p[0] = 1;";
        QTest::newRow("printf") << "<cstdio>"
                                << "printf(\"thread %d\\n\", threadIdx.x); p[0] = 1;";
        QTest::newRow("cuda_fp16") << "<cuda_fp16.h>"
                                   << "__half h = __float2half(1.5f); p[0] = __half2float(h);";
        QTest::newRow("cuda_bf16") << "<cuda_bf16.h>"
                                   << "__nv_bfloat16 b = __float2bfloat16(2.f); p[0] = __bfloat162float(b);";
        QTest::newRow("cooperative_groups")
            << "<cooperative_groups.h>"
            << "namespace cg = cooperative_groups; cg::thread_block b = cg::this_thread_block(); b.sync(); p[0] = 1;";
        QTest::newRow("cub block reduce")
            << "<cub/block/block_reduce.cuh>"
            << "using R = cub::BlockReduce<float, 128>; __shared__ typename R::TempStorage t;"
               " float s = R(t).Sum(p[threadIdx.x]); if (threadIdx.x == 0) p[0] = s;";
        QTest::newRow("cuda/std") << "<cuda/std/limits>"
                                  << "p[0] = cuda::std::numeric_limits<float>::max();";
    }
    void headers()
    {
        QFETCH(QString, include);
        QFETCH(QString, use);
        const QString src =
            QStringLiteral("#include %1\n__global__ void k(float *p)\n{\n    %2\n}\n").arg(include, use);
        const CompileResult r = compile(src);
        QVERIFY2(r.ok, qPrintable(dump(r)));
        QCOMPARE(r.errorCount(), 0);
        QCOMPARE(r.kernels.size(), 1);
        QVERIFY(!r.kernels[0].loweredName.isEmpty());
        QVERIFY(r.ptx.contains(r.kernels[0].loweredName.toLatin1()));
    }

    void templatesThroughNameExpressions()
    {
        const QString src = "template <int TILE, typename T>\n"
                            "__global__ void scale(T *p, T s)\n{\n    p[threadIdx.x % TILE] *= s;\n}\n"
                            "__global__ void plain(int *q) { q[0] = 1; }\n";
        CompileOptions o;
        o.nameExpressions = {"scale<16, float>", "scale<32, double>"};
        const CompileResult r = compile(src, o);
        QVERIFY2(r.ok, qPrintable(dump(r)));
        QCOMPARE(r.kernels.size(), 3);
        QCOMPARE(r.kernels[0].name, QString("scale<16, float>"));
        QCOMPARE(r.kernels[0].loweredName, QString("_Z5scaleILi16EfEvPT0_S0_"));
        QCOMPARE(r.kernels[0].params[0].type, QString("float *"));
        QCOMPARE(r.kernels[0].params[1].type, QString("float"));
        QCOMPARE(r.kernels[1].params[0].type, QString("double *"));
        QVERIFY(r.kernels[1].loweredName.startsWith("_Z5scaleILi32EdE"));
        // A C++ (not extern "C") kernel is lowered too.
        QCOMPARE(r.kernels[2].name, QString("plain"));
        QCOMPARE(r.kernels[2].loweredName, QString("_Z5plainPi"));
        for (const KernelInfo &k : r.kernels) {
            QVERIFY2(k.resources.known, qPrintable(k.name));
            QVERIFY(r.ptx.contains(k.loweredName.toLatin1()));
        }
    }

    void templateWithoutInstanceIsListed()
    {
        const CompileResult r = compile("template <int N> __global__ void k(float *p) { p[0] = N; }\n");
        QVERIFY2(r.ok, qPrintable(dump(r)));
        QCOMPARE(r.kernels.size(), 1);
        QVERIFY(r.kernels[0].isTemplate);
        QVERIFY(r.kernels[0].loweredName.isEmpty());
        QCOMPARE(r.kernels[0].templateParams.size(), 1);
    }

    void badNameExpressions_data()
    {
        QTest::addColumn<QString>("expression");
        QTest::addColumn<QString>("message");
        QTest::newRow("no such template") << "matmul<16>"
                                          << "name expression 'matmul<16>' matches no kernel";
        QTest::newRow("too many arguments") << "k<1, 2>"
                                            << "gives 2 template arguments; 'k' takes 1";
        QTest::newRow("wrong kind of argument") << "k<float>"
                                                << "name expression";
    }
    void badNameExpressions()
    {
        QFETCH(QString, expression);
        QFETCH(QString, message);
        CompileOptions o;
        o.nameExpressions = {expression};
        const CompileResult r = compile("template <int N> __global__ void k(float *p) { p[0] = N; }\n", o);
        QVERIFY(!r.ok);
        bool found = false;
        for (const Diagnostic &d : r.diagnostics) {
            found = found || (d.message.contains(message) && d.file == "<name expressions>");
        }
        QVERIFY2(found, qPrintable(dump(r)));
    }

    void resourcesFromPtxas()
    {
        const QString src =
            "__constant__ float c[64];\n"
            "extern \"C\" __global__ void k(float *p)\n{\n"
            "    __shared__ float s[512];\n    s[threadIdx.x] = p[threadIdx.x];\n"
            "    __syncthreads();\n    p[threadIdx.x] = s[511 - threadIdx.x] + c[threadIdx.x % 64];\n}\n";
        const CompileResult r = compile(src);
        QVERIFY2(r.ok, qPrintable(dump(r)));
        const KernelResources &x = r.kernels[0].resources;
        QVERIFY(x.known);
        QCOMPARE(x.sharedBytes, 512 * 4);
        QCOMPARE(x.barriers, 1);
        QVERIFY(x.registers > 0);
    }

    void options_data()
    {
        QTest::addColumn<QStringList>("defines");
        QTest::addColumn<QString>("arch");
        QTest::addColumn<QStringList>("extra");
        QTest::addColumn<bool>("ok");
        QTest::addColumn<QString>("message");
        QTest::newRow("define fixes it") << QStringList{"BLOCK_SIZE=256"} << "auto" << QStringList{} << true << "";
        QTest::newRow("explicit arch") << QStringList{"BLOCK_SIZE=1"} << "sm_80" << QStringList{} << true << "";
        QTest::newRow("virtual arch") << QStringList{"BLOCK_SIZE=1"} << "compute_90" << QStringList{} << true << "";
        QTest::newRow("unsupported arch") << QStringList{"BLOCK_SIZE=1"} << "sm_35" << QStringList{} << false
                                          << "arch 'sm_35' is not supported by this NVRTC (supported: sm_";
        QTest::newRow("nonsense arch") << QStringList{"BLOCK_SIZE=1"} << "pascal" << QStringList{} << false
                                       << "arch 'pascal' is not an architecture";
        QTest::newRow("bad option") << QStringList{"BLOCK_SIZE=1"} << "auto" << QStringList{"--frobnicate"} << false
                                    << "--frobnicate";
        QTest::newRow("bad define") << QStringList{"TWO WORDS=1"} << "auto" << QStringList{} << false
                                    << "define 'TWO WORDS=1' is not NAME or NAME=VALUE";
    }
    void options()
    {
        QFETCH(QStringList, defines);
        QFETCH(QString, arch);
        QFETCH(QStringList, extra);
        QFETCH(bool, ok);
        QFETCH(QString, message);
        CompileOptions o;
        o.defines = defines;
        o.arch = arch;
        o.extra = extra;
        const CompileResult r = compile("__global__ void k(int *a) { a[0] = BLOCK_SIZE; }\n", o);
        QCOMPARE(r.ok, ok);
        if (ok) {
            QVERIFY(!r.ptx.isEmpty());
            QCOMPARE(r.cubin.isEmpty(), arch.startsWith("compute_"));
        } else {
            bool found = false;
            for (const Diagnostic &d : r.diagnostics) {
                found = found || d.message.contains(message);
            }
            QVERIFY2(found, qPrintable(dump(r)));
        }
    }

    void archAuto()
    {
        QString note, error;
        const QList<int> supported{75, 80, 86, 89, 90, 100, 120};
        QCOMPARE(Compiler::resolveArch("auto", 9, 0, supported, &note, &error), QString("sm_90"));
        QVERIFY(note.isEmpty());
        QCOMPARE(Compiler::resolveArch("auto", 8, 7, supported, &note, &error), QString("sm_86"));
        QVERIFY(note.contains("cannot target sm_87"));
        note.clear();
        QCOMPARE(Compiler::resolveArch("auto", 0, 0, supported, &note, &error), QString("sm_90"));
        QCOMPARE(Compiler::resolveArch("auto", 12, 1, {75, 80, 90}, &note, &error), QString("sm_90"));
        QCOMPARE(Compiler::resolveArch("auto", 6, 1, {75, 80}, &note, &error), QString("sm_75"));
    }

    void badInput_data()
    {
        QTest::addColumn<QString>("source");
        QTest::addColumn<QString>("message");
        QTest::newRow("empty") << ""
                               << "kernel.cu is empty";
        QTest::newRow("whitespace") << "  \n\t\n"
                                    << "kernel.cu is empty";
        QTest::newRow("binary") << QString::fromLatin1(QByteArray("\x7f"
                                                                  "ELF\0\0\x01",
                                                                  7))
                                << "is not text";
        QTest::newRow("huge") << QString(5 * 1024 * 1024, 'x') << "is too large to compile: 5.0 MiB";
    }
    void badInput()
    {
        QFETCH(QString, source);
        QFETCH(QString, message);
        const CompileResult r = compile(source);
        QVERIFY(!r.ok);
        QCOMPARE(r.diagnostics.size(), 1);
        QVERIFY2(r.diagnostics[0].message.contains(message), qPrintable(dump(r)));
    }

    void noKernelWarns()
    {
        const CompileResult r = compile("__device__ int f(int x) { return x; }\n");
        QVERIFY(r.ok);
        QCOMPARE(r.warningCount(), 1);
        QVERIFY(r.diagnostics[0].message.contains("no __global__ function"));
    }

    void cache()
    {
        QTemporaryDir project;
        QFile header(project.filePath("params.cuh"));
        QVERIFY(header.open(QIODevice::WriteOnly));
        header.write("#define FACTOR 2\n");
        header.close();
        const QString src = "#include \"params.cuh\"\n__global__ void k(int *a) { a[0] = FACTOR; }\n";
        CompileRequest req;
        req.source = src;
        req.projectDir = project.path();
        QTemporaryDir cacheDir;
        Compiler compiler(Compiler::Config{cacheDir.path(), 64 * 1024 * 1024});

        auto run = [&] { return compiler.compile(req).value(); };
        const CompileResult miss = run();
        QVERIFY2(miss.ok, qPrintable(dump(miss)));
        QVERIFY(!miss.cached);
        QVERIFY(compiler.cache().diskBytes() > 0);

        const CompileResult hit = run();
        QVERIFY(hit.cached);
        QCOMPARE(hit.ptx, miss.ptx);
        QCOMPARE(hit.cubin, miss.cubin);
        QCOMPARE(hit.kernels.size(), 1);
        QCOMPARE(hit.kernels[0].loweredName, miss.kernels[0].loweredName);

        // A changed header is a miss, and its new value is compiled in.
        QVERIFY(header.open(QIODevice::WriteOnly | QIODevice::Truncate));
        header.write("#define FACTOR 3\n");
        header.close();
        const CompileResult changed = run();
        QVERIFY(!changed.cached);
        QVERIFY(changed.ptx != miss.ptx);

        // An option change is a miss.
        req.options.defines = {"UNUSED=1"};
        QVERIFY(!run().cached);
        req.options.defines.clear();
        QVERIFY(run().cached);

        // From disk, in a fresh compiler (another process, in effect).
        Compiler other(Compiler::Config{cacheDir.path(), 64 * 1024 * 1024});
        const Result<CompileResult> fromDisk = other.compile(req);
        QVERIFY(fromDisk->cached);
        QCOMPARE(fromDisk->ptx, changed.ptx);

        // The switch.
        req.options.useCache = false;
        QVERIFY(!run().cached);
    }

    void cacheEviction()
    {
        QTemporaryDir dir;
        CompileCache cache(dir.path(), 3000);
        CompileResult r;
        r.ptx = QByteArray(1000, 'p');
        for (int i = 0; i < 6; ++i) {
            cache.store(QByteArray::number(i), r);
            QTest::qWait(20); // distinct modification times
        }
        QVERIFY2(cache.diskBytes() <= 3000, qPrintable(QString::number(cache.diskBytes())));
        QVERIFY(cache.diskBytes() > 0);
        CompileCache fresh(dir.path(), 3000);
        QVERIFY(fresh.find(QByteArray::number(5)).has_value()); // the newest survives
        QVERIFY(!fresh.find(QByteArray::number(0)).has_value());
    }

    void logParsing()
    {
        const QString log = "kernel.cu(12): error: no instance of overloaded function \"f\" matches the argument list\n"
                            "            argument types are: (int *)\n"
                            "      f(p);\n"
                            "      ^\n"
                            "\n"
                            "kernel.cu(3): warning #177-D: variable \"x\" was declared but never referenced\n"
                            "    int x;\n"
                            "        ^\n"
                            "\n"
                            "Remark: The warnings can be suppressed with \"-diag-suppress <warning-number>\"\n"
                            "\"kernel.cu\": creating precompiled header file \"/tmp/x.pch\"\n"
                            "nvrtc: error: unrecognized option --foo found\n";
        const QList<Diagnostic> d = parseDiagnostics(log);
        QCOMPARE(d.size(), 3);
        QCOMPARE(d[0].line, 12);
        QCOMPARE(d[0].column, 5);
        QVERIFY(d[0].message.contains("argument types are: (int *)"));
        QCOMPARE(d[1].number, 177);
        QCOMPARE(d[1].severity, Diagnostic::Severity::Warning);
        QCOMPARE(d[1].column, 7);
        QCOMPARE(d[2].line, 0);
        QVERIFY(d[2].message.contains("--foo"));
    }
};

QTEST_GUILESS_MAIN(TestCompiler)
#include "tst_compiler.moc"

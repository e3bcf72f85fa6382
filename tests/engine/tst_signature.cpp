// The kernel signature scanner: every row is a __global__ function as people
// write them, and the parameter table it must produce.

#include "kernel/signature.h"
#include "kernel/starter.h"

#include <QtTest>

using namespace Kp;

class TestSignature : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // An exercise's starter from the instructor's solution: each kernel's
    // body emptied, everything else as written.
    void starterEmptiesKernelBodies_data()
    {
        QTest::addColumn<QString>("solution");
        QTest::addColumn<QString>("starter");
        QTest::addColumn<int>("kernels");
        const QString todo = QStringLiteral("\n    // Your code here: the exercise's description says what this kernel "
                                            "computes.\n");
        QTest::newRow("one kernel") << "__global__ void k(float *a, int n)\n{\n    a[0] = n;\n}\n"
                                    << "__global__ void k(float *a, int n)\n{" + todo + "}\n"
                                    << 1;
        QTest::newRow("template, launch bounds, braces in a comment and a string")
            << "template <int B>\n__global__ void __launch_bounds__(256) k(float *a)\n{\n    // }\n"
               "    const char *s = \"}\";\n    if (a) { a[0] = B; }\n}\nint after;\n"
            << "template <int B>\n__global__ void __launch_bounds__(256) k(float *a)\n{" + todo + "}\nint after;\n"
            << 1;
        QTest::newRow("helpers and declarations stay")
            << "#define N 4\n__device__ float twice(float v) { return 2 * v; }\n__global__ void d(float *a);\n"
               "__global__ void k(float *a) { a[0] = twice(a[0]); }\nextern \"C\" {\n__global__ void e(int *b) "
               "{ b[0] = N; }\n}\n"
            << "#define N 4\n__device__ float twice(float v) { return 2 * v; }\n__global__ void d(float *a);\n"
               "__global__ void k(float *a) {" +
                   todo + "}\nextern \"C\" {\n__global__ void e(int *b) {" + todo + "}\n}\n"
            << 2;
        QTest::newRow("no kernel") << "__device__ int f() { return 1; }\n"
                                   << "__device__ int f() { return 1; }\n"
                                   << 0;
        // Found by fuzz_signature: a parameter list left open swallowed the next kernel, and only once its
        // body was emptied did the list close, so a starter made again differed. The scan stops at the '{'.
        QTest::newRow("an unclosed parameter list stops at its brace")
            << "__global__ void a(int x { x = 1; }\n__global__ void b(float *p) { p[0] = (1; }\n"
            << "__global__ void a(int x { x = 1; }\n__global__ void b(float *p) {" + todo + "}\n"
            << 1;
        QTest::newRow("an unclosed body is left as it is") << "__global__ void k(float *a) { a[0] = 1;\n"
                                                           << "__global__ void k(float *a) { a[0] = 1;\n"
                                                           << 0;
    }
    void starterEmptiesKernelBodies()
    {
        QFETCH(QString, solution);
        QFETCH(QString, starter);
        QFETCH(int, kernels);
        const Kp::Starter s = Kp::starterSource(solution);
        QCOMPARE(s.source, starter);
        QCOMPARE(s.kernels, kernels);
        // Made again from itself, a starter does not change.
        QCOMPARE(Kp::starterSource(s.source).source, s.source);
        // The starter's kernels are the solution's, with the same parameters.
        const auto before = Kp::findKernels(solution);
        const auto after = Kp::findKernels(s.source);
        QCOMPARE(after.size(), before.size());
        for (qsizetype i = 0; i < before.size(); ++i) {
            QCOMPARE(after[i].name, before[i].name);
            QCOMPARE(after[i].params.size(), before[i].params.size());
        }
    }

    void params_data()
    {
        QTest::addColumn<QString>("source");
        QTest::addColumn<QString>("name");
        // "type|name|category" per parameter, ';' between parameters
        QTest::addColumn<QString>("expected");

        auto row = [](const char *tag, const char *src, const char *name, const char *exp) {
            QTest::newRow(tag) << QString::fromUtf8(src) << QString::fromUtf8(name) << QString::fromUtf8(exp);
        };
        row("vector add", "extern \"C\" __global__ void add(const float *a, const float *b, float *c, int n) {}", "add",
            "const float *|a|pointer;const float *|b|pointer;float *|c|pointer;int|n|scalar");
        row("restrict", "__global__ void k(const float *__restrict__ in, float *__restrict__ out) {}", "k",
            "const float *__restrict__|in|pointer;float *__restrict__|out|pointer");
        row("no params", "__global__ void k() {}", "k", "");
        row("void params", "__global__ void k(void) {}", "k", "");
        row("unsigned", "__global__ void k(unsigned n, unsigned int m) {}", "k",
            "unsigned|n|scalar;unsigned int|m|scalar");
        row("long long", "__global__ void k(unsigned long long n, long long m) {}", "k",
            "unsigned long long|n|scalar;long long|m|scalar");
        row("size_t", "__global__ void k(size_t n) {}", "k", "size_t|n|scalar");
        row("stdint", "__global__ void k(uint8_t *p, int64_t n) {}", "k", "uint8_t *|p|pointer;int64_t|n|scalar");
        row("double pointer", "__global__ void k(float **rows) {}", "k", "float **|rows|pointer");
        row("float4", "__global__ void k(float4 *v, float4 s) {}", "k", "float4 *|v|pointer;float4|s|vector");
        row("uchar4 image", "__global__ void k(uchar4 *img, int w, int h) {}", "k",
            "uchar4 *|img|pointer;int|w|scalar;int|h|scalar");
        row("int2", "__global__ void k(int2 size) {}", "k", "int2|size|vector");
        row("half", "__global__ void k(half *h, __half s) {}", "k", "half *|h|pointer;__half|s|half");
        row("bfloat16", "__global__ void k(__nv_bfloat16 *b, __nv_bfloat162 x) {}", "k",
            "__nv_bfloat16 *|b|pointer;__nv_bfloat162|x|half");
        row("struct by value", "struct P { int n; float s; };\n__global__ void k(P p, float *o) {}", "k",
            "P|p|struct;float *|o|pointer");
        row("struct keyword", "__global__ void k(struct Params p) {}", "k", "struct Params|p|struct");
        row("const value", "__global__ void k(const int n) {}", "k", "const int|n|scalar");
        row("const pointer to const", "__global__ void k(const float *const p) {}", "k",
            "const float *const|p|pointer");
        row("array parameter", "__global__ void k(float a[]) {}", "k", "float *|a|pointer");
        row("unnamed", "__global__ void k(int, float *) {}", "k", "int||scalar;float *||pointer");
        row("launch bounds", "__global__ void __launch_bounds__(256, 2) k(float *p) {}", "k", "float *|p|pointer");
        row("launch bounds before global", "__launch_bounds__(128) __global__ void k(int n) {}", "k", "int|n|scalar");
        row("comments inside", "__global__ void k(float *p /* out */, // n\n int n) {}", "k",
            "float *|p|pointer;int|n|scalar");
        row("multiline", "__global__\nvoid\nk(\n  float *p,\n  int n\n)\n{\n}", "k", "float *|p|pointer;int|n|scalar");
        row("template instance type", "template <typename T> struct V {};\n__global__ void k(V<float> v) {}", "k",
            "V<float>|v|struct");
        row("namespace type", "namespace a { struct S {}; }\n__global__ void k(a::S s) {}", "k", "a::S|s|struct");
        row("volatile", "__global__ void k(volatile int *flag) {}", "k", "volatile int *|flag|pointer");
        row("double", "__global__ void k(double *x, double a) {}", "k", "double *|x|pointer;double|a|scalar");
        row("bool and char", "__global__ void k(bool b, char c, unsigned char u) {}", "k",
            "bool|b|scalar;char|c|scalar;unsigned char|u|scalar");
        row("grid constant", "struct P { int n; };\n__global__ void k(const __grid_constant__ P p) {}", "k",
            "const __grid_constant__ P|p|struct");
        row("static inline", "static __global__ void k(int n) {}", "k", "int|n|scalar");
        row("attribute after", "__global__ void k(int n) __attribute__((unused)) {}", "k", "int|n|scalar");
        row("default argument", "__global__ void k(int n = 4) {}", "k", "int|n|scalar");
    }
    void params()
    {
        QFETCH(QString, source);
        QFETCH(QString, name);
        QFETCH(QString, expected);
        const QList<KernelSignature> ks = findKernels(source);
        QCOMPARE(ks.size(), 1);
        QCOMPARE(ks[0].name, name);
        QStringList got;
        for (const KernelParam &p : ks[0].params) {
            got << QStringLiteral("%1|%2|%3").arg(p.type, p.name, KernelParam::categoryName(p.category));
        }
        QCOMPARE(got.join(';'), expected);
    }

    void pointerFlags()
    {
        const auto ks = findKernels("__global__ void k(const float *__restrict__ a, float *b, int c) {}");
        QCOMPARE(ks.size(), 1);
        const auto &p = ks[0].params;
        QVERIFY(p[0].isConst && p[0].isRestrict);
        QCOMPARE(p[0].baseType, QString("float"));
        QCOMPARE(p[0].pointerDepth, 1);
        QVERIFY(!p[1].isConst && !p[1].isRestrict);
        QCOMPARE(p[2].pointerDepth, 0);
    }

    void findsSeveralAndSkips()
    {
        const QString src = R"(
// __global__ void commented(int n) {}
const char *s = "__global__ void inString(int n) {}";
__device__ float helper(float x) { return x; }
__global__ void declared(int n);
#define KERNEL __global__ void macroKernel(int n) {}
__global__ void first(int n) { }
extern "C" {
__global__ void second(float *p) { }
}
namespace outer { namespace inner {
__global__ void third(int *p) { }
} }
)";
        const QList<KernelSignature> ks = findKernels(src);
        QCOMPARE(ks.size(), 3);
        QCOMPARE(ks[0].name, QString("first"));
        QCOMPARE(ks[0].line, 7);
        QVERIFY(!ks[0].externC);
        QCOMPARE(ks[1].name, QString("second"));
        QVERIFY(ks[1].externC);
        QCOMPARE(ks[2].qualifiedName, QString("outer::inner::third"));
        QCOMPARE(ks[2].line, 12);
    }

    void templates_data()
    {
        QTest::addColumn<QString>("source");
        QTest::addColumn<QString>("expression");
        QTest::addColumn<QString>("expected");
        QTest::newRow("non-type") << "template <int N> __global__ void k(float *p) {}"
                                  << "k<16>"
                                  << "float *|p";
        QTest::newRow("type") << "template <typename T> __global__ void k(T *p, T s) {}"
                              << "k<float>"
                              << "float *|p;float|s";
        QTest::newRow("class keyword") << "template <class T> __global__ void k(const T *__restrict__ p) {}"
                                       << "k<double>"
                                       << "const double *__restrict__|p";
        QTest::newRow("two params") << "template <typename T, int B> __global__ void k(T *p, int n) {}"
                                    << "k<int, 256>"
                                    << "int *|p;int|n";
        QTest::newRow("default") << "template <typename T = float, int B = 128> __global__ void k(T *p) {}"
                                 << "k<>"
                                 << "float *|p";
        QTest::newRow("partial default") << "template <typename T, typename U = T> __global__ void k(U *p) {}"
                                         << "k<half, float>"
                                         << "float *|p";
        QTest::newRow("vector type arg") << "template <typename V> __global__ void k(V *p) {}"
                                         << "k<float4>"
                                         << "float4 *|p";
        QTest::newRow("unsigned arg") << "template <typename T> __global__ void k(T n) {}"
                                      << "k<unsigned int>"
                                      << "unsigned int|n";
        QTest::newRow("ampersand") << "template <int N> __global__ void k(int *p) {}"
                                   << "&k<4>"
                                   << "int *|p";
    }
    void templates()
    {
        QFETCH(QString, source);
        QFETCH(QString, expression);
        QFETCH(QString, expected);
        const auto ks = findKernels(source);
        QCOMPARE(ks.size(), 1);
        QVERIFY(ks[0].isTemplate());
        KernelSignature inst;
        QString why;
        QVERIFY2(instantiate(ks[0], expression, &inst, &why), qPrintable(why));
        QStringList got;
        for (const KernelParam &p : inst.params) {
            got << p.type + '|' + p.name;
        }
        QCOMPARE(got.join(';'), expected);
    }

    void templateParamsListed()
    {
        const auto ks = findKernels("template <typename T, int BLOCK = 256> __global__ void k(T *p) {}");
        QCOMPARE(ks[0].templateParams.size(), 2);
        QCOMPARE(ks[0].templateParams[0].kind, QString("typename"));
        QCOMPARE(ks[0].templateParams[0].name, QString("T"));
        QCOMPARE(ks[0].templateParams[1].kind, QString("int"));
        QCOMPARE(ks[0].templateParams[1].name, QString("BLOCK"));
        QCOMPARE(ks[0].templateParams[1].defaultValue, QString("256"));
    }

    void templateOnlyForItsFunction()
    {
        // A template struct before a plain kernel must not make the kernel a template.
        const auto ks = findKernels("template <typename T> struct S { T x; };\n__global__ void k(int n) {}");
        QCOMPARE(ks.size(), 1);
        QVERIFY(!ks[0].isTemplate());
    }

    void badInstantiations_data()
    {
        QTest::addColumn<QString>("expression");
        QTest::addColumn<QString>("expected");
        QTest::newRow("other name") << "other<1>"
                                    << "does not name kernel";
        QTest::newRow("too many") << "k<float, 1, 2>"
                                  << "gives 3 template arguments; 'k' takes 2";
        QTest::newRow("missing value") << "k<>"
                                       << "leaves template parameter 'T'";
        QTest::newRow("unclosed") << "k<float"
                                  << "unclosed";
    }
    void badInstantiations()
    {
        QFETCH(QString, expression);
        QFETCH(QString, expected);
        const auto ks = findKernels("template <typename T, int N = 1> __global__ void k(T *p) {}");
        KernelSignature inst;
        QString why;
        QVERIFY(!instantiate(ks[0], expression, &inst, &why));
        QVERIFY2(why.contains(expected), qPrintable(why));
    }

    void garbageDoesNotCrash_data()
    {
        QTest::addColumn<QString>("source");
        QTest::newRow("empty") << "";
        QTest::newRow("unclosed paren") << "__global__ void k(int n";
        QTest::newRow("unclosed template") << "template <int N __global__ void k() {}";
        QTest::newRow("unclosed comment") << "/* __global__ void k() {}";
        QTest::newRow("unclosed string") << "\"__global__ void k() {}";
        QTest::newRow("lone global") << "__global__";
        QTest::newRow("braces") << "}}}}{{{";
    }
    void garbageDoesNotCrash()
    {
        QFETCH(QString, source);
        const auto ks = findKernels(source);
        QVERIFY(ks.size() <= 1);
    }
};

QTEST_GUILESS_MAIN(TestSignature)
#include "tst_signature.moc"

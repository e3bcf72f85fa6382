// Struct layouts from the compiled code (kernel/structlayout): the scanner's
// members, the probe compiled by real NVRTC and read back from its PTX
// (padding, alignment, nesting, arrays), the dtype table against the
// toolkit's own sizeof/alignof, and the braced value syntax. No GPU needed.

#include "compile/compiler.h"
#include "cuda/nvrtcapi.h"
#include "kernel/structlayout.h"

#include <QTemporaryDir>
#include <QtTest>

#include "testutil.h"

using namespace Kp;

class TestStructLayout : public QObject
{
    Q_OBJECT

private:
    std::unique_ptr<Compiler> m_compiler;

    CompileResult compile(const QString &source)
    {
        CompileRequest req;
        req.source = source;
        req.fileName = QStringLiteral("kernel.cu");
        req.options.useCache = false;
        Result<CompileResult> r = m_compiler->compile(req);
        if (!r) {
            qWarning("%s", qPrintable(r.error().toString()));
            return {};
        }
        return r.value();
    }

    static QString fieldsText(const StructLayout &l)
    {
        QStringList parts;
        for (const StructField &f : l.fields) {
            parts << QStringLiteral("%1@%2:%3x%4").arg(f.name).arg(f.offset).arg(f.bytes).arg(f.count);
        }
        return QStringLiteral("size %1 align %2 | %3").arg(l.size).arg(l.align).arg(parts.join(' '));
    }

private Q_SLOTS:
    void initTestCase()
    {
        const auto nv = NvrtcApi::instance();
        if (!nv) {
            QSKIP(qPrintable("NVRTC is not available: " + nv.error().message));
        }
        Compiler::Config config;
        config.cacheDir = QStringLiteral("-");
        config.isolated = false; // the layouts, not the sandbox, are under test here
        m_compiler = std::make_unique<Compiler>(config);
    }

    void scanner_data()
    {
        QTest::addColumn<QString>("source");
        QTest::addColumn<QString>("members"); // name:type[] ...
        QTest::addColumn<QString>("unsupported");
        QTest::newRow("plain") << "struct P { float a; int b; };"
                               << "a:float b:int"
                               << "";
        QTest::newRow("several declarators and arrays") << "struct P { float x, y[3], *z; const char c = 'x'; };"
                                                        << "x:float y:float[] z:float * c:char"
                                                        << "";
        QTest::newRow("functions, statics, labels and comments skipped")
            << "struct P {\n public:\n  __device__ float get() const { return a; } // a ; b\n  static const int k = "
               "3;\n  float a; /* int hidden; */\n private:\n  double d;\n};"
            << "a:float d:double"
            << "";
        QTest::newRow("typedef struct") << "typedef struct { int n; float2 v; } Params;"
                                        << "n:int v:float2[]"
                                        << "";
        QTest::newRow("aligned") << "struct __align__(16) A { char c; };"
                                 << "c:char"
                                 << "";
        QTest::newRow("bit-field") << "struct B { unsigned a : 3; unsigned b : 5; };"
                                   << "a:unsigned b:unsigned"
                                   << "member 'a' is a bit-field";
        QTest::newRow("anonymous union") << "struct U { union { int i; float f; }; int tag; };"
                                         << "tag:int"
                                         << "it has an anonymous union";
    }
    void scanner()
    {
        QFETCH(QString, source);
        QFETCH(QString, members);
        QFETCH(QString, unsupported);
        const QList<StructDecl> decls = findStructs(source);
        QCOMPARE(decls.size(), 1);
        QStringList got;
        for (const StructDecl::Member &m : decls[0].members) {
            got << m.name + ':' + m.type + (m.isArray ? "[]" : "");
        }
        // "float2 v" is not an array; the row's [] marks only real ones.
        QCOMPARE(got.join(' '), QString(members).replace("float2[]", "float2"));
        QCOMPARE(decls[0].unsupported, unsupported);
    }

    // Known structs: the offsets a C++ compiler must give them (the same on every CUDA target).
    void probe_data()
    {
        QTest::addColumn<QString>("source"); // defines the struct and a kernel taking it by value
        QTest::addColumn<QString>("type");
        QTest::addColumn<QString>("layout");
        QTest::newRow("padding after char") << "struct P { char c; double d; int i; };\n"
                                            << "P"
                                            << "size 24 align 8 | c@0:1x1 d@8:8x1 i@16:4x1";
        QTest::newRow("float3 packs, float4 aligns") << "struct V { float3 a; float4 b; float c; };\n"
                                                     << "V"
                                                     << "size 48 align 16 | a@0:12x1 b@16:16x1 c@32:4x1";
        QTest::newRow("arrays") << "struct A { short s[3]; int i[2][2]; char tail; };\n"
                                << "A"
                                << "size 28 align 4 | s@0:6x3 i@8:16x4 tail@24:1x1";
        QTest::newRow("nested struct") << "struct In { char c; double d; };\nstruct Out { int n; In in; In arr[2]; };\n"
                                       << "Out"
                                       << "size 56 align 8 | n@0:4x1 in@8:16x1 arr@24:32x2";
        QTest::newRow("__align__ and a macro-sized array")
            << "#define N (2 * 3)\nstruct __align__(16) G { char c; float w[N]; };\n"
            << "G"
            << "size 32 align 16 | c@0:1x1 w@4:24x6";
        QTest::newRow("typedef struct with pointer and bool")
            << "typedef struct { float *data; bool flag; int2 size; } Img;\n"
            << "Img"
            << "size 24 align 8 | data@0:8x1 flag@8:1x1 size@16:8x1";
        QTest::newRow("namespace") << "namespace ns { struct Q { double d; char c; }; }\n"
                                   << "ns::Q"
                                   << "size 16 align 8 | d@0:8x1 c@8:1x1";
    }
    void probe()
    {
        QFETCH(QString, source);
        QFETCH(QString, type);
        QFETCH(QString, layout);
        const CompileResult r =
            compile(source + QStringLiteral("__global__ void k(%1 p, int *out) { out[0] = sizeof(p); }\n").arg(type));
        QVERIFY2(r.ok, qPrintable(r.log));
        QVERIFY2(r.layoutError.isEmpty(), qPrintable(r.layoutError));
        QVERIFY2(r.layouts.contains(type), qPrintable(QStringList(r.layouts.keys()).join(", ")));
        QCOMPARE(fieldsText(r.layouts.value(type)), layout);
        // The user's PTX is untouched: the probe is a unit of its own.
        QVERIFY(!r.ptx.contains(kLayoutProbeSymbol));
    }

    void leavesAndPacking()
    {
        const CompileResult r = compile("#include <cuda_fp16.h>\nstruct In { char c; double d; };\n"
                                        "struct P { float a; In in; int arr[2]; half2 h; bool b; };\n"
                                        "__global__ void k(P p, float *o) { o[0] = p.a; }\n");
        QVERIFY2(r.ok && r.layoutError.isEmpty(), qPrintable(r.log + r.layoutError));
        const Result<QList<StructLeaf>> leaves = structLeaves("P", r.layouts);
        KP_VERIFY_RESULT(leaves);
        QStringList paths;
        for (const StructLeaf &l : *leaves) {
            paths << QStringLiteral("%1@%2").arg(l.path).arg(l.offset);
        }
        QCOMPARE(paths.join(' '), QString("a@0 in.c@8 in.d@16 arr[0]@24 arr[1]@28 h.x@32 h.y@34 b@36"));
        const QByteArray bytes = packStruct(r.layouts.value("P"), *leaves, {1.5, 65, 2.25, -1, 7, 1.0, -2.0, 5});
        QCOMPARE(bytes.size(), 40);
        float a;
        double d;
        int arr1;
        std::memcpy(&a, bytes.constData(), 4);
        std::memcpy(&d, bytes.constData() + 16, 8);
        std::memcpy(&arr1, bytes.constData() + 28, 4);
        QCOMPARE(a, 1.5f);
        QCOMPARE(bytes[8], char(65));
        QCOMPARE(d, 2.25);
        QCOMPARE(arr1, 7);
        QCOMPARE(quint8(bytes[33]), quint8(0x3c)); // half 1.0 = 0x3c00, little endian
        QCOMPARE(quint8(bytes[35]), quint8(0xc0)); // half -2.0 = 0xc000
        QCOMPARE(bytes[36], char(1));
        QCOMPARE(bytes.mid(9, 7), QByteArray(7, '\0')); // padding stays zero
    }

    void unsupportedMembers()
    {
        const CompileResult r = compile("struct B { unsigned a : 3; unsigned b : 5; };\n"
                                        "__global__ void k(B b, int *o) { o[0] = b.a; }\n");
        // offsetof cannot name a bit-field: the struct gets its size only, and a value of it is refused by name.
        QVERIFY(r.ok);
        QVERIFY2(r.layoutError.isEmpty(), qPrintable(r.layoutError));
        QCOMPARE(fieldsText(r.layouts.value("B")), QString("size 4 align 4 | "));
        const Result<QList<StructLeaf>> leaves = structLeaves("B", r.layouts);
        QVERIFY(!leaves);
        QCOMPARE(leaves.error().message, QString("B cannot be written as a value: member 'a' is a bit-field"));
    }

    // Every vector dtype's size and alignment as the toolkit's headers declare them.
    void dtypesMatchTheToolkit()
    {
        QString source = "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n";
        QStringList checks;
        for (int t = 0; t < kDTypeCount; ++t) {
            const DTypeInfo &i = dtypeInfo(static_cast<DType>(t));
            const QString c = QString::fromLatin1(i.cudaName);
            checks << QStringLiteral("static_assert(sizeof(%1) == %2 && alignof(%1) == %3, \"%4\");")
                          .arg(c)
                          .arg(i.elementBytes())
                          .arg(i.alignment)
                          .arg(QString::fromLatin1(i.name));
        }
        // The other spellings the project accepts are the same types.
        for (const char *alias : {"long1", "long2", "long3", "long4", "ulong4", "long4_32a", "longlong4", "double4",
                                  "double4_16a", "half2", "__nv_bfloat162", "nv_bfloat162"}) {
            const DTypeInfo &i = dtypeInfo(*dtypeFromName(QString::fromLatin1(alias)));
            checks << QStringLiteral("static_assert(sizeof(%1) == %2 && alignof(%1) == %3, \"%1\");")
                          .arg(QLatin1String(alias))
                          .arg(i.elementBytes())
                          .arg(i.alignment);
        }
        source += checks.join('\n') + "\n__global__ void k() {}\n";
        const CompileResult r = compile(source);
        QVERIFY2(r.ok, qPrintable(r.log));
    }

    void bracedValues_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("type");
        QTest::addColumn<QList<double>>("values");
        QTest::addColumn<QString>("error");
        using L = QList<double>;
        QTest::newRow("float2") << "float2 {1, 2}"
                                << "float2" << L{1, 2} << "";
        QTest::newRow("no type") << "{1.5, -2e3}"
                                 << "float2" << L{1.5, -2000} << "";
        QTest::newRow("nested, suffixes, true and nullptr") << "P{1.5f, {2u, 3ull}, true, nullptr, 0x10}"
                                                            << "P" << L{1.5, 2, 3, 1, 0, 16} << "";
        QTest::newRow("half2 spelt __half2") << "__half2 {1, 2}"
                                             << "half2" << L{1, 2} << "";
        QTest::newRow("wrong type") << "int2 {1, 2}"
                                    << "float2" << L{} << "a: the value is written as int2 but the parameter is float2";
        QTest::newRow("not a number") << "float2 {1, x}"
                                      << "float2" << L{} << "a: 'x' is not a number";
        QTest::newRow("unbalanced") << "float2 {1, {2}"
                                    << "float2" << L{} << "a: unbalanced '{' in 'float2 {1, {2}'";
        QTest::newRow("no braces") << "1, 2"
                                   << "float2" << L{}
                                   << "a: expected a braced value such as \"float2 {1, 2}\", got '1, 2'";
        QTest::newRow("trailing text") << "{1} {2}"
                                       << "" << L{} << "a: text after the closing '}' in '{1} {2}'";
    }
    void bracedValues()
    {
        QFETCH(QString, text);
        QFETCH(QString, type);
        QFETCH(QList<double>, values);
        QFETCH(QString, error);
        const Result<QList<double>> r = parseBracedValues(text, type, "a");
        if (!error.isEmpty()) {
            QVERIFY(!r);
            QCOMPARE(r.error().message, error);
            return;
        }
        KP_VERIFY_RESULT(r);
        QCOMPARE(*r, values);
    }
};

QTEST_GUILESS_MAIN(TestStructLayout)
#include "tst_structlayout.moc"

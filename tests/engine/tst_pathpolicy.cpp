// Path confinement: a project held to its own folder cannot name files
// outside it, through "..", absolute names or symbolic links, and the
// source outside is refused before anything of it is read.

#include "project/pathpolicy.h"
#include "project/projectio.h"
#include "testutil.h"

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <sys/stat.h>

using namespace Kp;

namespace {

void write(const QString &path, const QByteArray &bytes)
{
    QFile f(path);
    QVERIFY2(f.open(QIODevice::WriteOnly), qPrintable(path));
    f.write(bytes);
}

QByteArray project(const QString &source, const QString &extra = {})
{
    return QStringLiteral(R"({"format": "kernel-playground-project", "version": 1, "source": "%1",
 "scalars": [{"name": "n", "type": "int32", "value": 16}], %2
 "launches": [{"kernel": "k", "grid": [1], "block": [16], "args": ["n"]}]})")
        .arg(source, extra)
        .toUtf8();
}

const char *kKernel = "extern \"C\" __global__ void k(int n) {}\n";

} // namespace

class TestPathPolicy : public QObject
{
    Q_OBJECT

    QTemporaryDir m_tmp;
    QString m_dir;     // the project's folder
    QString m_outside; // a sibling folder

private slots:
    void initTestCase()
    {
        QVERIFY(m_tmp.isValid());
        m_dir = m_tmp.filePath(QStringLiteral("lab"));
        m_outside = m_tmp.filePath(QStringLiteral("secret"));
        QVERIFY(QDir().mkpath(m_dir + QStringLiteral("/inc")));
        QVERIFY(QDir().mkpath(m_outside));
        write(m_dir + QStringLiteral("/k.cu"), kKernel);
        write(m_outside + QStringLiteral("/k.cu"), kKernel);
        QVERIFY(QFile::link(m_outside, m_dir + QStringLiteral("/linked")));
        QVERIFY(QFile::link(m_outside + QStringLiteral("/k.cu"), m_dir + QStringLiteral("/alias.cu")));
        QVERIFY(QFile::link(m_dir + QStringLiteral("/k.cu"), m_dir + QStringLiteral("/inc/self.cu")));
        // A FIFO outside: opening it would block or be refused as "not a
        // regular file"; confined, the refusal names the folder instead.
        QCOMPARE(::mkfifo(qPrintable(m_outside + QStringLiteral("/pipe.cu")), 0600), 0);
    }

    void loadConfined_data()
    {
        QTest::addColumn<QString>("source");
        QTest::addColumn<QString>("extra");
        QTest::addColumn<QString>("field"); // empty: loads
        QTest::addColumn<QString>("message");

        QTest::newRow("inside") << "k.cu"
                                << ""
                                << ""
                                << "";
        QTest::newRow("inside, through a link inside") << "inc/self.cu"
                                                       << ""
                                                       << ""
                                                       << "";
        QTest::newRow("inside, written with ..") << "inc/../k.cu"
                                                 << ""
                                                 << ""
                                                 << "";
        QTest::newRow("parent folder") << "../secret/k.cu"
                                       << ""
                                       << "source"
                                       << "'../secret/k.cu' is outside";
        QTest::newRow("absolute") << "%OUT%/k.cu"
                                  << ""
                                  << "source"
                                  << "is outside the project's folder";
        QTest::newRow("linked folder") << "linked/k.cu"
                                       << ""
                                       << "source"
                                       << "(it leads to %OUT%/k.cu)";
        QTest::newRow("linked file") << "alias.cu"
                                     << ""
                                     << "source"
                                     << "(it leads to %OUT%/k.cu)";
        QTest::newRow("FIFO outside, never opened") << "../secret/pipe.cu"
                                                    << ""
                                                    << "source"
                                                    << "is outside";
        QTest::newRow("missing file under a linked folder") << "linked/none.cu"
                                                            << ""
                                                            << "source"
                                                            << "(it leads to %OUT%/none.cu)";
        QTest::newRow("include folder outside") << "k.cu"
                                                << R"("compile": {"includeDirs": ["inc", "/usr/include"]},)"
                                                << "compile.includeDirs[1]"
                                                << "'/usr/include' is outside";
        QTest::newRow("reference source outside") << "k.cu"
                                                  << R"("reference": {"source": "../secret/k.cu"},)"
                                                  << "reference.source"
                                                  << "'../secret/k.cu' is outside";
        QTest::newRow("check file through a link")
            << "k.cu"
            << R"("buffers": [{"name": "a", "dtype": "float32", "shape": [4], "init": {"kind": "zeros"}}],
                  "checks": [{"buffer": "a", "npy": "linked/a.npy"}],)"
            << "checks[0].npy"
            << "(it leads to %OUT%/a.npy)";
        QTest::newRow("include folder inside") << "k.cu"
                                               << R"("compile": {"includeDirs": ["inc"]},)"
                                               << ""
                                               << "";
        QTest::newRow("npy init outside")
            << "k.cu"
            << R"("buffers": [{"name": "a", "dtype": "float32", "shape": [4], "init": {"kind": "npy", "file": "../secret/a.npy"}}],)"
            << "buffers[0].init.file"
            << "'../secret/a.npy' is outside";
        QTest::newRow("image init through a link")
            << "k.cu"
            << R"("buffers": [{"name": "a", "dtype": "uint8", "shape": [4, 4], "init": {"kind": "image", "file": "linked/x.png"}}],)"
            << "buffers[0].init.file"
            << "(it leads to %OUT%/x.png)";
    }

    void loadConfined()
    {
        QFETCH(QString, source);
        QFETCH(QString, extra);
        QFETCH(QString, field);
        QFETCH(QString, message);
        source.replace(QStringLiteral("%OUT%"), m_outside);
        message.replace(QStringLiteral("%OUT%"), QFileInfo(m_outside).canonicalFilePath());
        const QString path = m_dir + QStringLiteral("/p.kpg");
        write(path, project(source, extra));

        const Result<Project> confined = loadProject(path, PathScope::ProjectFolder);
        if (field.isEmpty()) {
            QVERIFY2(confined.ok(), confined.ok() ? "" : qPrintable(confined.error().message));
            QCOMPARE(confined->sourceText, QString::fromUtf8(kKernel));
            return;
        }
        QVERIFY(!confined.ok());
        QCOMPARE(confined.error().path, field);
        QCOMPARE(confined.error().code, Error::Code::BadInput);
        QVERIFY2(confined.error().message.contains(message), qPrintable(confined.error().message));
        QVERIFY2(confined.error().message.contains(field + QStringLiteral(": ")), qPrintable(confined.error().message));

        // Unconfined, the same project loads (where its files exist and are regular).
        if (!source.contains(QStringLiteral("pipe")) && !source.contains(QStringLiteral("none"))) {
            const Result<Project> open = loadProject(path);
            QVERIFY2(open.ok(), open.ok() ? "" : qPrintable(open.error().message));
            QVERIFY(confineProjectPaths(*open).error().path == field);
        }
    }

    void presetsAreInside()
    {
        // The program's own projects are trusted and name nothing of the user's.
        Project p;
        p.path = QStringLiteral(":/presets/heat/heat.kpg");
        p.sourceFile = QStringLiteral("/etc/passwd");
        QVERIFY(confineProjectPaths(p).ok());
    }

    void kpgRunConfine()
    {
        const QString path = m_dir + QStringLiteral("/run.kpg");
        write(path, project(QStringLiteral("linked/k.cu")));
        const KpTest::Run r =
            KpTest::run(QStringLiteral("kpg"), {QStringLiteral("run"), QStringLiteral("--confine"), path});
        QCOMPARE(r.exitCode, 65);
        QVERIFY2(r.err.contains(QStringLiteral("source: 'linked/k.cu' (it leads to")), qPrintable(r.err));
        QVERIFY2(r.err.contains(QStringLiteral("outside the project's folder")), qPrintable(r.err));
    }

    void kpgCheckNeedsTheSandbox()
    {
        // kpg check compiles others' sources: not without the sandbox unless told,
        // and it confines the project by default.
        const QString path = m_dir + QStringLiteral("/check.kpg");
        write(path,
              project(QStringLiteral("k.cu"),
                      QStringLiteral(
                          R"("buffers": [{"name": "a", "dtype": "int32", "shape": [4], "init": {"kind": "zeros"}}],
            "checks": [{"buffer": "a", "expected": "0"}],)")));
        const KpTest::Run off = KpTest::run(QStringLiteral("kpg"), {QStringLiteral("check"), path},
                                            {QStringLiteral("KPG_COMPILER_SANDBOX=0")});
        QCOMPARE(off.exitCode, 69);
        QVERIFY2(off.err.contains(QStringLiteral("compiles sources only in the compiler sandbox, and here it is off "
                                                 "(KPG_COMPILER_SANDBOX=0); give --no-sandbox")),
                 qPrintable(off.err));
        // Told to, it goes on to the compile and the run (69 again without a GPU, for another reason).
        const KpTest::Run told =
            KpTest::run(QStringLiteral("kpg"), {QStringLiteral("check"), QStringLiteral("--no-sandbox"), path},
                        {QStringLiteral("KPG_COMPILER_SANDBOX=0")});
        QVERIFY2(!told.err.contains(QStringLiteral("compiler sandbox")), qPrintable(told.err));
        // The check passes on a GPU (a is zeros, expected 0); without one kpg says so (69).
        const bool gpu = KpTest::run(QStringLiteral("kpg"), {QStringLiteral("devices")}).exitCode == 0;
        QVERIFY2(told.exitCode == (gpu ? 0 : 69), qPrintable(told.err));

        const QString linked = m_dir + QStringLiteral("/linked-check.kpg");
        write(linked,
              project(QStringLiteral("linked/k.cu"),
                      QStringLiteral(
                          R"("buffers": [{"name": "a", "dtype": "int32", "shape": [4], "init": {"kind": "zeros"}}],
            "checks": [{"buffer": "a", "expected": "0"}],)")));
        const KpTest::Run confined = KpTest::run(
            QStringLiteral("kpg"), {QStringLiteral("check"), QStringLiteral("--json"), QStringLiteral("-"), linked});
        if (confined.err.contains(QStringLiteral("compiler sandbox"))) {
            QSKIP("this kernel has no Landlock; the confinement of kpg check is tested where it has");
        }
        QCOMPARE(confined.exitCode, 65);
        QVERIFY2(confined.err.contains(QStringLiteral("source: 'linked/k.cu' (it leads to")), qPrintable(confined.err));
    }

    void kpgDevicesNamesTheSandbox()
    {
        // With or without a GPU, --help lists the option; devices says what the sandbox is where it runs.
        const KpTest::Run help = KpTest::run(QStringLiteral("kpg"), {QStringLiteral("--help")});
        QVERIFY(help.out.contains(QStringLiteral("--confine")));
        const KpTest::Run off =
            KpTest::run(QStringLiteral("kpg"), {QStringLiteral("devices")}, {QStringLiteral("KPG_COMPILER_SANDBOX=0")});
        if (off.exitCode == 0) {
            QVERIFY2(off.out.contains(QStringLiteral("Compiler sandbox: off (KPG_COMPILER_SANDBOX=0)")),
                     qPrintable(off.out));
        }
    }
};

QTEST_GUILESS_MAIN(TestPathPolicy)
#include "tst_pathpolicy.moc"

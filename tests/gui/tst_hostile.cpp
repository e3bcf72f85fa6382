// A shared project must never crash the window: hostile .kpg files opened
// one after another in the real window (offscreen), each costing one message
// and nothing of the project that was open, then many runs through the GUI's
// run path with the process's memory flat.

#include "guitestutil.h"

#include "client/engineclient.h"
#include "shell/mainwindow.h"
#include "workbench/projectdocument.h"
#include "workbench/runcontroller.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <sys/stat.h>
#include <unistd.h>

using namespace Kp;
using namespace KpTest;

namespace {

/** This process's resident memory in KiB (VmRSS), or -1. */
qint64 residentKiB()
{
    QFile f(QStringLiteral("/proc/self/status"));
    if (!f.open(QIODevice::ReadOnly)) {
        return -1;
    }
    for (const QByteArray &line : f.readAll().split('\n')) {
        if (line.startsWith("VmRSS:")) {
            return line.mid(6).trimmed().split(' ').value(0).toLongLong();
        }
    }
    return -1;
}

QByteArray
project(const QByteArray &extra,
        const QByteArray &buffers = R"([{"name": "a", "dtype": "float32", "shape": [16], "init": {"kind": "zeros"}}])")
{
    return R"({"format": "kernel-playground-project", "version": 1,
 "source": {"inline": "__global__ void k(float *a) { a[threadIdx.x] = 1; }"},
 "buffers": )" +
           buffers + R"(,
 "launches": [{"kernel": "k", "grid": [1], "block": [16], "args": ["a"]}])" +
           extra + "}";
}

} // namespace

class TestHostile : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void hostileProjectsCostOneMessageEach()
    {
        QTemporaryDir dir;
        const auto file = [&](const QString &name, const QByteArray &bytes) {
            const QString path = dir.filePath(name);
            QFile f(path);
            f.open(QIODevice::WriteOnly);
            f.write(bytes);
            return path;
        };
        QByteArray deep(100000, '[');
        QList<QPair<QString, QString>> cases; // (name, path)
        cases << qMakePair(
            QStringLiteral("sweep range to INT64_MAX"),
            file(
                "max.kpg",
                project(
                    R"(, "sweep": {"axes": ["n=9223372036854775806:9223372036854775807", "block.x=1:9223372036854775807:pow2"]})")));
        cases << qMakePair(QStringLiteral("sweep range past 64 bits"),
                           file("past.kpg", project(R"(, "sweep": {"axes": ["n=99999999999999999999:1"]})")));
        cases << qMakePair(QStringLiteral("a sweep of 10^18 values"),
                           file("huge_sweep.kpg", project(R"(, "sweep": {"axes": ["n=0:1000000000000000000"]})")));
        cases << qMakePair(
            QStringLiteral("a buffer of 10^24 elements"),
            file(
                "huge_buffer.kpg",
                project(
                    "",
                    R"([{"name": "a", "dtype": "float32", "shape": [1000000000000, 1000000000000], "init": {"kind": "zeros"}}])")));
        cases << qMakePair(QStringLiteral("100,000 nested arrays"), file("deep.kpg", deep));
        cases << qMakePair(QStringLiteral("NUL bytes"), file("nul.kpg", QByteArray("{\"format\"\0\0\0", 13)));
        cases << qMakePair(QStringLiteral("empty"), file("empty.kpg", QByteArray()));
        cases << qMakePair(QStringLiteral("control characters in the title"),
                           file("title.kpg", project(", \"title\": \"\\u001b[2J\\u0007evil\\u202e\"")));
        cases << qMakePair(
            QStringLiteral("source is /proc/self/environ"),
            file("proc.kpg",
                 QByteArray(
                     R"({"format": "kernel-playground-project", "version": 1, "source": "/proc/self/environ"})")));
        cases << qMakePair(
            QStringLiteral("npy input is /dev/zero"),
            file(
                "devzero.kpg",
                project(
                    "",
                    R"([{"name": "a", "dtype": "float32", "shape": [16], "init": {"kind": "npy", "file": "/dev/zero"}}])")));
        cases << qMakePair(
            QStringLiteral("grid of 2^40 blocks"),
            file("grid.kpg", QByteArray(project("")).replace("\"grid\": [1]", "\"grid\": [1099511627776]")));
        cases << qMakePair(QStringLiteral("10 MB of garbage"), file("garbage.kpg", QByteArray(10 << 20, '\x9c')));
        const QString fifo = dir.filePath(QStringLiteral("fifo.kpg"));
        QCOMPARE(::mkfifo(QFile::encodeName(fifo).constData(), 0600), 0);
        cases << qMakePair(QStringLiteral("a FIFO"), fifo);
        QDir(dir.path()).mkdir(QStringLiteral("folder.kpg"));
        cases << qMakePair(QStringLiteral("a folder"), dir.filePath(QStringLiteral("folder.kpg")));
        const QString link = dir.filePath(QStringLiteral("passwd.kpg"));
        QVERIFY(QFile::link(QStringLiteral("/etc/passwd"), link));
        cases << qMakePair(QStringLiteral("a link to /etc/passwd"), link);

        EngineClient engine;
        MainWindow w(&engine);
        KP_VERIFY_RESULT(w.openProject(QStringLiteral(":/presets/vector_add/vector_add.kpg")));
        const qint64 before = residentKiB();
        for (const auto &[what, path] : cases) {
            const QString openBefore = w.project().path;
            const Status s = w.openProject(path);
            // A file of the kernel's (the user's environment) is never opened as a project's source.
            QVERIFY2(!s || !what.contains(QLatin1String("/proc")), qPrintable(what));
            if (s) {
                // Opened: it must be usable and the window alive; the next case replaces it.
                QVERIFY2(w.project().path == path, qPrintable(what));
                continue;
            }
            const QString message = s.error().message;
            QVERIFY2(!message.trimmed().isEmpty(), qPrintable(what));
            QVERIFY2(message.size() < 2000, qPrintable(what + QStringLiteral(": ") + message.left(200)));
            for (const QChar c : message) {
                QVERIFY2(c == QLatin1Char('\n') || c == QLatin1Char('\t') ||
                             (!c.isNonCharacter() && c.category() != QChar::Other_Control),
                         qPrintable(what + QStringLiteral(": a control character in the message")));
            }
            // The project that was open is still open, untouched.
            QCOMPARE(w.project().path, openBefore);
            qInfo("%s: %s", qPrintable(what), qPrintable(message.left(160)));
        }
        const qint64 after = residentKiB();
        qInfo("resident memory: %lld KiB before the hostile projects, %lld KiB after", before, after);
        QVERIFY2(after - before < 256 * 1024, "the hostile projects kept more than 256 MiB");
    }

    // Runs through the window's run path, one after another: the process's
    // memory stays flat (without a GPU each run ends at the worker's
    // "no driver", after the compile, the fill and prepareRun).
    void manyRunsKeepMemoryFlat()
    {
        EngineClient engine;
        MainWindow w(&engine);
        KP_VERIFY_RESULT(w.openProject(QStringLiteral(":/presets/vector_add/vector_add.kpg")));
        QVERIFY(waitCompiled(w));
        const int runs =
            qEnvironmentVariableIntValue("KPG_SOAK_RUNS") > 0 ? qEnvironmentVariableIntValue("KPG_SOAK_RUNS") : 200;
        qint64 warm = -1;
        for (int i = 0; i < runs; ++i) {
            QSignalSpy finished(&w, &MainWindow::runFinished);
            w.runNow();
            QVERIFY2(finished.wait(60000), qPrintable(QStringLiteral("run %1").arg(i)));
            QTRY_VERIFY(!w.isRunning());
            if (i == runs / 10) {
                warm = residentKiB(); // after the first runs' caches and pools
            }
        }
        const qint64 end = residentKiB();
        qInfo("resident memory over %d runs: %lld KiB after %d runs, %lld KiB at the end", runs, warm, runs / 10, end);
        QVERIFY2(end - warm < 64 * 1024, "memory grew by more than 64 MiB over the runs");
    }
};

QTEST_MAIN(TestHostile)
#include "tst_hostile.moc"

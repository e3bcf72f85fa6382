// kpg-worker's own kernels (engine/run/workerkernels.ptx): the string built
// into the worker is the file, ptxas assembles it for the architectures the
// toolkit supports, and every kernel the worker looks up by name is in it.
// Without this a typo in the PTX shows only on a GPU, as a worker that
// cannot time anything.

#include "run/workerkernels.h"
#include "testutil.h"

#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

namespace {

QByteArray readFile(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        qFatal("cannot read %s", qPrintable(path));
    }
    return f.readAll();
}

} // namespace

class TestWorkerKernels : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void theWorkerCarriesTheFile()
    {
        QCOMPARE(QByteArray(Kp::kWorkerKernelsPtx),
                 readFile(QStringLiteral(KPG_SOURCE_DIR "/engine/run/workerkernels.ptx")));
    }

    void everyKernelLookedUpIsDefined()
    {
        // The names the session asks the module for, from its source.
        const QString session =
            QString::fromUtf8(readFile(QStringLiteral(KPG_SOURCE_DIR "/engine/run/gpusession.cpp")));
        const QRegularExpression lookup(QStringLiteral(R"re(cuModuleGetFunction\([^,]+,\s*blocker,\s*"(\w+)"\))re"));
        QStringList wanted;
        for (auto it = lookup.globalMatch(session); it.hasNext();) {
            wanted << it.next().captured(1);
        }
        QCOMPARE(wanted,
                 (QStringList{"kpg_block_stream", "kpg_l2_flush", "kpg_empty", "kpg_guard_check", "kpg_guard_fill"}));
        const QString ptx = QString::fromLatin1(Kp::kWorkerKernelsPtx);
        for (const QString &name : wanted) {
            QVERIFY2(ptx.contains(QRegularExpression(QStringLiteral(R"re(\.visible \.entry %1\()re").arg(name))),
                     qPrintable(name));
        }
    }

    void ptxasAssemblesIt_data()
    {
        QTest::addColumn<QString>("arch");
        QTest::newRow("Turing, the oldest CUDA 13 builds for") << "sm_75";
        QTest::newRow("Hopper") << "sm_90";
    }
    void ptxasAssemblesIt()
    {
        QFETCH(QString, arch);
        const QString ptxas = KpTest::ptxasPath();
        if (ptxas.isEmpty()) {
            QSKIP("ptxas is not installed (the CUDA Toolkit's bin/)");
        }
        QTemporaryDir dir;
        QFile f(dir.filePath(QStringLiteral("w.ptx")));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(Kp::kWorkerKernelsPtx);
        f.close();
        QProcess p;
        p.start(ptxas, {QStringLiteral("--gpu-name"), arch, QStringLiteral("-v"), f.fileName(), QStringLiteral("-o"),
                        dir.filePath(QStringLiteral("w.cubin"))});
        QVERIFY(p.waitForFinished(60000));
        const QString out = QString::fromUtf8(p.readAllStandardOutput() + p.readAllStandardError());
        QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0, qPrintable(out));
        for (const char *name :
             {"kpg_block_stream", "kpg_l2_flush", "kpg_empty", "kpg_guard_check", "kpg_guard_fill"}) {
            QVERIFY2(out.contains(QStringLiteral("Compiling entry function '%1'").arg(QLatin1String(name))),
                     qPrintable(out));
        }
    }
};

QTEST_GUILESS_MAIN(TestWorkerKernels)
#include "tst_workerkernels.moc"

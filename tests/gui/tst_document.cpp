// The project document without a window: edits through the project's own
// validation, undo and redo, the modified state, and saving (which file the
// kernel goes to, and what is never overwritten).

#include "compile/compiler.h"
#include "project/projectio.h"
#include "testutil.h"
#include "workbench/fieldplace.h"
#include "workbench/projectdocument.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

using namespace Kp;

namespace {
const QString kVectorAdd = QStringLiteral(":/presets/vector_add/vector_add.kpg");

QString readText(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
}

bool writeText(const QString &path, const QString &text)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(text.toUtf8()) == text.toUtf8().size();
}
} // namespace

class TestDocument : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void editIsOneUndoStep()
    {
        ProjectDocument doc;
        KP_VERIFY_RESULT(doc.openProject(kVectorAdd));
        QVERIFY(!doc.isModified());
        QSignalSpy changed(&doc, &ProjectDocument::projectChanged);
        KP_VERIFY_RESULT(doc.editLaunch(0, "block", QJsonArray{128}));
        QCOMPARE(doc.project().launches[0].block.first(), QString("128"));
        QCOMPARE(changed.count(), 1);
        QVERIFY(doc.isModified());
        QCOMPARE(doc.undoStack()->count(), 1);
        QCOMPARE(doc.undoStack()->undoText(), QString("Set block of step 1"));
        doc.undoStack()->undo();
        QCOMPARE(doc.project().launches[0].block.first(), QString("256"));
        QCOMPARE(changed.count(), 2);
        QVERIFY2(!doc.isModified(), "undoing back to the saved state leaves nothing unsaved");
        doc.undoStack()->redo();
        QCOMPARE(doc.project().launches[0].block.first(), QString("128"));
        QVERIFY(doc.isModified());
    }

    void undoKeepsTheSourceText()
    {
        ProjectDocument doc;
        KP_VERIFY_RESULT(doc.openProject(kVectorAdd));
        KP_VERIFY_RESULT(doc.editTiming("minSamples", 50));
        doc.setSourceText("// typed after the edit\n");
        doc.undoStack()->undo();
        QCOMPARE(doc.project().sourceText, QString("// typed after the edit\n"));
    }

    void sameValueIsNoStep()
    {
        ProjectDocument doc;
        KP_VERIFY_RESULT(doc.openProject(kVectorAdd));
        KP_VERIFY_RESULT(doc.editLaunch(0, "block", QJsonArray{256}));
        QCOMPARE(doc.undoStack()->count(), 0);
        QVERIFY(!doc.isModified());
    }

    void refusedEditChangesNothing_data()
    {
        QTest::addColumn<QString>("list");
        QTest::addColumn<int>("index");
        QTest::addColumn<QString>("field");
        QTest::addColumn<QJsonValue>("value");
        QTest::addColumn<QString>("message");
        QTest::addColumn<QString>("path");
        QTest::newRow("block of zero threads")
            << "launches" << 0 << "block" << QJsonValue(QJsonArray{0}) << "launches[0].block"
            << "launches[0].block[0]";
        QTest::newRow("buffer shape with a zero")
            << "buffers" << 2 << "shape" << QJsonValue(QJsonArray{0, 4}) << "buffers[2].shape"
            << "buffers[2].shape";
        QTest::newRow("unknown dtype") << "buffers" << 0 << "dtype" << QJsonValue("float33") << "buffers[0].dtype"
                                       << "buffers[0].dtype";
        QTest::newRow("scalar value not a number")
            << "scalars" << 0 << "value" << QJsonValue("many") << "scalars[0].value"
            << "scalars[0].value";
    }

    void refusedEditChangesNothing()
    {
        QFETCH(QString, list);
        QFETCH(int, index);
        QFETCH(QString, field);
        QFETCH(QJsonValue, value);
        QFETCH(QString, message);
        QFETCH(QString, path);
        ProjectDocument doc;
        KP_VERIFY_RESULT(doc.openProject(kVectorAdd));
        const QByteArray before = serializeProject(doc.project());
        QSignalSpy changed(&doc, &ProjectDocument::projectChanged);
        const Status s =
            list == "launches" ? doc.editLaunch(index, field, value) : doc.editListItem(list, index, field, value);
        QVERIFY(!s);
        QVERIFY2(s.error().message.startsWith(message), qPrintable(s.error().message));
        QVERIFY2(s.error().path.startsWith(path), qPrintable(s.error().path));
        QCOMPARE(serializeProject(doc.project()), before);
        QCOMPARE(changed.count(), 0);
        QCOMPARE(doc.undoStack()->count(), 0);
        QVERIFY(!doc.isModified());
    }

    void addAndRemoveBuffersUndo()
    {
        ProjectDocument doc;
        KP_VERIFY_RESULT(doc.openProject(kVectorAdd));
        const qsizetype n = doc.project().buffers.size();
        KP_VERIFY_RESULT(doc.appendListItem("buffers", QJsonObject{{"name", "extra"},
                                                                   {"dtype", "int32"},
                                                                   {"shape", QJsonArray{16}},
                                                                   {"init", QJsonObject{{"kind", "zeros"}}}}));
        QCOMPARE(doc.project().buffers.size(), n + 1);
        QVERIFY(doc.hostBuffers().find("extra"));
        // A buffer a launch step uses cannot go: the binding would dangle.
        QVERIFY(!doc.removeListItem("buffers", 0));
        KP_VERIFY_RESULT(doc.removeListItem("buffers", int(n)));
        QCOMPARE(doc.project().buffers.size(), n);
        QVERIFY(!doc.hostBuffers().find("extra"));
        doc.undoStack()->undo();
        QVERIFY(doc.hostBuffers().find("extra"));
        doc.undoStack()->undo();
        QCOMPARE(doc.project().buffers.size(), n);
        QVERIFY(!doc.hostBuffers().find("extra"));
        QVERIFY(!doc.isModified());
    }

    void validationNamesTheField()
    {
        ProjectDocument doc;
        KP_VERIFY_RESULT(doc.openProject(kVectorAdd));
        doc.revalidate(); // no compile yet: nothing is wrong, the bindings wait for the kernel
        QVERIFY(!doc.validation().error);
        QVERIFY(!doc.validation().pending.isEmpty());
        KP_VERIFY_RESULT(doc.openSource(QStringLiteral(":/presets/vector_add/vector_add.cu")));
        doc.revalidate();
        QVERIFY(doc.validation().error);
        QCOMPARE(doc.validation().error->path, QString("launches"));
        QVERIFY(doc.validation().error->message.startsWith("No launch step yet"));
    }

    // Before the first compile lands the bindings are pending, not "does not
    // compile (0 errors)"; a real compile checks them; a compile that failed
    // without a diagnostic says the compiler's words.
    void validationWaitsForTheFirstCompile()
    {
        ProjectDocument doc;
        KP_VERIFY_RESULT(doc.openProject(kVectorAdd));
        doc.revalidate(); // as an edit before the compile lands does
        QVERIFY(!doc.validation().error);
        QVERIFY2(doc.validation().pending.contains("once it has compiled"), qPrintable(doc.validation().pending));
        QVERIFY2(doc.validation().resolved.value(0).startsWith("grid (4096, 1, 1)"),
                 qPrintable(doc.validation().resolved.value(0)));
        Compiler::Config config;
        config.cacheDir = QStringLiteral("-");
        config.isolated = false;
        Compiler compiler(config);
        const Result<CompileResult> c = compiler.compile(doc.compileRequest(9, 0));
        if (!c) {
            QSKIP(qPrintable(c.error().message)); // no NVRTC
        }
        QVERIFY2(c->ok, qPrintable(c->log));
        doc.setCompiled(*c);
        QVERIFY2(!doc.validation().error, qPrintable(doc.validation().error->message));
        QVERIFY(doc.validation().pending.isEmpty());
        CompileResult stopped;
        stopped.log = QStringLiteral("nvrtc: out of memory\nmore");
        doc.setCompiled(stopped);
        QVERIFY(doc.validation().error);
        QCOMPARE(doc.validation().error->message, QString("the kernel did not compile: nvrtc: out of memory"));
        // A new project is not checked against the last one's compile.
        KP_VERIFY_RESULT(doc.openProject(kVectorAdd));
        doc.revalidate();
        QVERIFY(!doc.validation().error);
        QVERIFY(!doc.validation().pending.isEmpty());
    }

    // Open vector_add, change the kernel, Save As p.kpg; New, Save As q.kpg
    // in the same folder: each project keeps its own kernel.
    void twoProjectsFromOnePresetKeepTheirKernels()
    {
        QTemporaryDir dir;
        const QString p = dir.filePath("p.kpg");
        const QString q = dir.filePath("q.kpg");
        {
            ProjectDocument doc;
            KP_VERIFY_RESULT(doc.openProject(kVectorAdd));
            doc.setSourceText(doc.project().sourceText + "// p's edit\n");
            QCOMPARE(doc.sourceConflict(p), QString());
            KP_VERIFY_RESULT(doc.saveTo(p));
            QCOMPARE(doc.project().sourceFile, QString("p.cu"));
            KP_VERIFY_RESULT(doc.newProject());
            QCOMPARE(doc.sourceConflict(q), QString());
            KP_VERIFY_RESULT(doc.saveTo(q));
        }
        QVERIFY(readText(dir.filePath("p.cu")).endsWith("// p's edit\n"));
        QVERIFY(!readText(dir.filePath("q.cu")).contains("p's edit"));
        QVERIFY(!QFileInfo::exists(dir.filePath("vector_add.cu")));
        ProjectDocument reopened;
        KP_VERIFY_RESULT(reopened.openProject(p));
        QVERIFY(reopened.project().sourceText.endsWith("// p's edit\n"));
    }

    void saveAsAsksBeforeOverwritingAnotherKernel()
    {
        QTemporaryDir dir;
        QVERIFY(writeText(dir.filePath("r.cu"), "__global__ void other() {}\n"));
        ProjectDocument doc;
        KP_VERIFY_RESULT(doc.openProject(kVectorAdd));
        QCOMPARE(doc.sourceConflict(dir.filePath("r.kpg")), QFileInfo(dir.filePath("r.cu")).absoluteFilePath());
        // The same text is no conflict: writing it loses nothing.
        QVERIFY(writeText(dir.filePath("r.cu"), doc.project().sourceText));
        QCOMPARE(doc.sourceConflict(dir.filePath("r.kpg")), QString());
    }

    void saveKeepsTheProjectsOwnSource()
    {
        QTemporaryDir dir;
        QVERIFY(writeText(dir.filePath("kernel_v2.cu"), "__global__ void k(float *x) { x[0] = 1; }\n"));
        QVERIFY(writeText(dir.filePath("mine.kpg"),
                          R"({"format": "kernel-playground-project", "version": 1, "source": "kernel_v2.cu"})"));
        ProjectDocument doc;
        KP_VERIFY_RESULT(doc.openProject(dir.filePath("mine.kpg")));
        QCOMPARE(doc.sourceConflict(dir.filePath("mine.kpg")), QString());
        doc.setSourceText("__global__ void k(float *x) { x[0] = 2; }\n");
        KP_VERIFY_RESULT(doc.saveTo(dir.filePath("mine.kpg")));
        QCOMPARE(doc.project().sourceFile, QString("kernel_v2.cu"));
        QCOMPARE(readText(dir.filePath("kernel_v2.cu")), QString("__global__ void k(float *x) { x[0] = 2; }\n"));
        QVERIFY(!QFileInfo::exists(dir.filePath("mine.cu")));
    }

    void inlineSourceStaysInline()
    {
        QTemporaryDir dir;
        QVERIFY(writeText(dir.filePath("a.kpg"), R"({"format": "kernel-playground-project", "version": 1,
            "source": {"inline": "__global__ void k() {}\n"}})"));
        ProjectDocument doc;
        KP_VERIFY_RESULT(doc.openProject(dir.filePath("a.kpg")));
        KP_VERIFY_RESULT(doc.saveTo(dir.filePath("b.kpg")));
        QVERIFY(doc.project().sourceFile.isEmpty());
        QVERIFY(!QFileInfo::exists(dir.filePath("b.cu")));
    }

    void bareSourceGetsAProjectNamedCu()
    {
        QTemporaryDir dir;
        QVERIFY(writeText(dir.filePath("k.cu"), "__global__ void k() {}\n"));
        ProjectDocument doc;
        KP_VERIFY_RESULT(doc.openSource(dir.filePath("k.cu")));
        QCOMPARE(doc.sourceFileName(), QString("k.cu"));
        QCOMPARE(doc.compileRequest(0, 0).projectDir, QFileInfo(dir.path()).absoluteFilePath());
        QCOMPARE(doc.displayName(), QString("k.cu"));
        KP_VERIFY_RESULT(doc.saveTo(dir.filePath("lab.kpg")));
        QCOMPARE(readText(dir.filePath("lab.cu")), QString("__global__ void k() {}\n"));
        QCOMPARE(readText(dir.filePath("k.cu")), QString("__global__ void k() {}\n"));
        QCOMPARE(doc.displayName(), QString("lab.kpg"));
    }

    void refusesWhatIsNotARegularFile()
    {
        ProjectDocument doc;
        const Status s = doc.openSource("/dev/zero");
        QVERIFY(!s);
        QVERIFY2(s.error().message.contains("not a regular file"), qPrintable(s.error().message));
    }

    void fieldPlaceWordsThePath_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("place");
        QTest::newRow("grid axis") << "launches[0].grid[1]"
                                   << "step 1, grid y";
        QTest::newRow("block axis") << "launches[1].block[0]"
                                    << "step 2, block x";
        QTest::newRow("whole block") << "launches[0].block"
                                     << "step 1, block";
        QTest::newRow("argument") << "launches[0].args[2]"
                                  << "step 1, argument 3";
        QTest::newRow("argument count") << "launches[0].args"
                                        << "step 1, arguments";
        QTest::newRow("shared memory") << "launches[0].sharedBytes"
                                       << "step 1, dynamic shared memory";
        QTest::newRow("kernel") << "launches[0].kernel"
                                << "step 1, kernel";
        QTest::newRow("buffer by name") << "buffers[2].shape"
                                        << "buffer c, shape";
        QTest::newRow("buffer init file") << "buffers[0].init.file"
                                          << "buffer a, init.file";
        QTest::newRow("buffer past the end") << "buffers[9].dtype"
                                             << "buffer 10, dtype";
        QTest::newRow("scalar by name") << "scalars[0].value"
                                        << "scalar n, value";
        QTest::newRow("timing") << "timing.mode"
                                << "timing, mode";
        QTest::newRow("unknown stays") << "format"
                                       << "format";
    }

    void fieldPlaceWordsThePath()
    {
        QFETCH(QString, path);
        QFETCH(QString, place);
        ProjectDocument doc;
        KP_VERIFY_RESULT(doc.openProject(kVectorAdd));
        QCOMPARE(fieldPlace(path, doc.project()), place);
        Error e{"project", Error::Code::BadInput, {}, path + ": something is wrong"};
        e.path = path;
        QCOMPARE(panelMessage(e, doc.project()), place + ": something is wrong");
        e.path.clear(); // no structured path: the message stays as it is
        QCOMPARE(panelMessage(e, doc.project()), path + ": something is wrong");
    }

    void editorAndRunCompileAlike()
    {
        // One request builder: a preset (no folder on disk) includes from nowhere,
        // a saved project from its folder, and the file name is the kernel's.
        ProjectDocument doc;
        KP_VERIFY_RESULT(doc.openProject(kVectorAdd));
        CompileRequest req = doc.compileRequest(9, 0);
        QCOMPARE(req.fileName, QString("vector_add.cu"));
        QVERIFY(req.projectDir.isEmpty());
        QCOMPARE(req.deviceCcMajor, 9);
        QTemporaryDir dir;
        KP_VERIFY_RESULT(doc.saveTo(dir.filePath("s.kpg")));
        req = doc.compileRequest(0, 0);
        QCOMPARE(req.fileName, QString("s.cu"));
        QCOMPARE(req.projectDir, QFileInfo(dir.path()).absoluteFilePath());
    }
};

QTEST_GUILESS_MAIN(TestDocument)
#include "tst_document.moc"

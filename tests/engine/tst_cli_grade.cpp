// kpg grade without a GPU, on the test class in tests/data/lab: compile
// errors with the submitted file's line numbers, "not submitted", "no GPU"
// for the rest; the table, CSV and JSON; --resume after a kill and from a
// journal that already holds finished results; hostile submissions (links
// leading outside, a spreadsheet formula as a name); bad labs and folders.
// The GPU side is tests/gpu/tst_gpu_grade.cpp, Slurm tests/slurm.

#include "compile/sandbox.h"
#include "testutil.h"

#include <QCryptographicHash>
#include <QDir>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

namespace {

const QString kData = QStringLiteral(KPG_SOURCE_DIR "/tests/data/lab");

/** Copies a folder tree (the class is changed per test). */
void copyTree(const QString &from, const QString &to)
{
    QDir().mkpath(to);
    QDirIterator it(from, QDir::Files | QDir::Dirs | QDir::NoDotAndDotDot, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString path = it.next();
        const QString target = to + path.mid(from.size());
        if (it.fileInfo().isDir()) {
            QDir().mkpath(target);
        } else {
            QVERIFY(QFile::copy(path, target));
        }
    }
}

QByteArray readAll(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

void writeFile(const QString &path, const QByteArray &data)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(data);
}

/** The CSV as rows "student,exercise" -> "outcome". */
QMap<QString, QString> outcomes(const QByteArray &csv)
{
    QMap<QString, QString> m;
    const QList<QByteArray> lines = csv.split('\n');
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const QList<QByteArray> f = lines[i].trimmed().split(',');
        if (f.size() >= 3) {
            m.insert(QString::fromUtf8(f[0] + '/' + f[1]), QString::fromUtf8(f[2]));
        }
    }
    return m;
}

const QMap<QString, QString> kNoGpuOutcomes{
    {"alice/saxpy", "no-gpu"},      {"alice/scale", "no-gpu"},      {"alice/vector_add", "no-gpu"},
    {"bob/saxpy", "compile-error"}, {"bob/scale", "not-submitted"}, {"bob/vector_add", "no-gpu"},
    {"carol/saxpy", "no-gpu"},      {"carol/scale", "no-gpu"},      {"carol/vector_add", "no-gpu"},
    {"dave/saxpy", "no-gpu"},       {"dave/scale", "no-gpu"},       {"dave/vector_add", "no-gpu"},
};

/** Environment for kpg: never a driver, so "no GPU" is certain even on a GPU machine. */
const QStringList kNoDriver{"KPG_CUDA_DRIVER=/nonexistent/libcuda.so.1"};

} // namespace

class TestCliGrade : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_lab;
    QString m_subs;
    int m_runs = 0;

    KpTest::Run grade(const QStringList &extra, const QStringList &env = kNoDriver)
    {
        return KpTest::run("kpg", QStringList{"grade", m_lab, "--submissions", m_subs, "--no-sandbox"} + extra, env,
                           240000);
    }

private Q_SLOTS:
    void init()
    {
        QVERIFY(m_dir.isValid());
        const QString root = m_dir.filePath(QStringLiteral("class-%1").arg(++m_runs));
        copyTree(kData, root);
        m_lab = root + "/exercises";
        m_subs = root + "/submissions";
    }

    void classWithoutGpu()
    {
        const QString csv = m_dir.filePath("grades.csv");
        const QString json = m_dir.filePath("grades.json");
        const KpTest::Run r = grade({"--csv", csv, "--json", json});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QCOMPARE(outcomes(readAll(csv)), kNoGpuOutcomes);
        // The compile error with the submitted file's name and line, in the table and the CSV.
        QVERIFY2(r.out.contains(QRegularExpression(R"(bob\n  saxpy +compile error +saxpy\.cu:5:5: expected a ";")")),
                 qPrintable(r.out));
        QVERIFY(readAll(csv).contains("bob,saxpy,compile-error,,,\"saxpy.cu:5:5: expected a \"\";\"\"\""));
        QVERIFY2(r.out.contains("not submitted  bob/scale.cu is missing"), qPrintable(r.out));
        QVERIFY2(r.out.contains("saxpy       0 of 4 passed (1 compile error, 3 no GPU)"), qPrintable(r.out));
        QVERIFY2(r.out.contains("scale       0 of 3 passed (1 not submitted, 3 no GPU)"), qPrintable(r.out));
        QVERIFY2(r.err.contains("No NVIDIA driver found"), qPrintable(r.err));
        QVERIFY2(r.err.contains("10 submissions were compiled and bound but not run: no GPU"), qPrintable(r.err));
        // Not a terminal: a line per finished item.
        QCOMPARE(r.err.count(QRegularExpression(R"(^\[\d+/12\] )", QRegularExpression::MultilineOption)), 12);

        const QJsonObject doc = QJsonDocument::fromJson(readAll(json)).object();
        QCOMPARE(doc.value("exercises").toArray().size(), 3);
        QCOMPARE(doc.value("students").toArray().size(), 4);
        const QJsonArray results = doc.value("results").toArray();
        QCOMPARE(results.size(), 12);
        const QJsonObject bobSaxpy = results[3].toObject();
        QCOMPARE(bobSaxpy.value("student").toString(), QString("bob"));
        QCOMPARE(bobSaxpy.value("outcome").toString(), QString("compile-error"));
        QCOMPARE(bobSaxpy.value("compileErrors").toArray().first().toString(),
                 QString("saxpy.cu:5:5: expected a \";\""));
        QCOMPARE(bobSaxpy.value("sha256").toString().size(), 64);
        const QJsonObject summary = doc.value("summary").toArray()[1].toObject();
        QCOMPARE(summary.value("exercise").toString(), QString("scale"));
        QCOMPARE(summary.value("submissions").toInt(), 3);
        QCOMPARE(summary.value("outcomes").toObject().value("not-submitted").toInt(), 1);
        QCOMPARE(summary.value("outcomes").toObject().value("no-gpu").toInt(), 3);
        // The journal beside --json: a header and a line per item.
        QCOMPARE(readAll(json + ".journal.jsonl").count('\n'), 13);

        // --require-gpu: no grading without a GPU.
        const KpTest::Run req = grade({"--require-gpu", "--csv", m_dir.filePath("req.csv")});
        QCOMPARE(req.exitCode, 69);
        QVERIFY2(req.err.contains("grade: no GPU to grade on: No NVIDIA driver found"), qPrintable(req.err));
        QVERIFY(!QFile::exists(m_dir.filePath("req.csv")));
        // --only and --json -: the table moves to stderr, the JSON to stdout.
        const KpTest::Run only = grade({"--only", "bob", "--json", "-", "--journal", m_dir.filePath("only.jsonl")});
        QCOMPARE(only.exitCode, 0);
        QCOMPARE(QJsonDocument::fromJson(only.out.toUtf8()).object().value("results").toArray().size(), 3);
        QVERIFY(only.err.contains("saxpy       0 of 1 passed (1 compile error)"));
    }

    void nestedSubmissions()
    {
        // A zip unpacked with its folders: bob's scale is one folder down (and
        // zip residue beside it), carol's vector_add is there twice.
        writeFile(m_subs + "/bob/lab1/scale.cu", readAll(m_subs + "/alice/scale.cu"));
        writeFile(m_subs + "/bob/__MACOSX/lab1/scale.cu", "garbage");
        QVERIFY(QDir().mkpath(m_subs + "/carol/a"));
        QVERIFY(QFile::rename(m_subs + "/carol/vector_add.cu", m_subs + "/carol/a/vector_add.cu"));
        writeFile(m_subs + "/carol/b/vector_add.cu", readAll(m_subs + "/carol/a/vector_add.cu"));
        const QString json = m_dir.filePath("nested.json");
        const QString feedback = m_dir.filePath("nested-feedback");
        const QString csv = m_dir.filePath("nested.csv");
        const KpTest::Run r = grade({"--only", "bob,carol", "--json", json, "--feedback", feedback, "--csv", csv});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("  scale       no GPU         compiled and bound, not run\n      found in bob/lab1/\n"),
                 qPrintable(r.out));
        QVERIFY2(r.out.contains("  vector_add  refused        carol/vector_add.cu: 2 files named vector_add.cu in the "
                                "student's folder (carol/a/vector_add.cu, carol/b/vector_add.cu)"),
                 qPrintable(r.out));
        QMap<QString, QJsonObject> res;
        for (const QJsonValue &v : QJsonDocument::fromJson(readAll(json)).object().value("results").toArray()) {
            res.insert(v["student"].toString() + "/" + v["exercise"].toString(), v.toObject());
        }
        QCOMPARE(res["bob/scale"]["foundIn"].toString(), QString("bob/lab1/"));
        QCOMPARE(
            res["bob/scale"]["sha256"].toString(),
            QString(QCryptographicHash::hash(readAll(m_subs + "/alice/scale.cu"), QCryptographicHash::Sha256).toHex()));
        QCOMPARE(res["bob/saxpy"]["foundIn"].toString(), QString());
        QCOMPARE(res["carol/vector_add"]["outcome"].toString(), QString("refused"));
        QVERIFY2(readAll(feedback + "/bob.md").contains("Found in bob/lab1/ \\(graded from there\\)\\."),
                 readAll(feedback + "/bob.md").constData());
        // The CSV's last column says where each file was found: bob/lab1/ for the nested one, empty at the top.
        const QList<QByteArray> rows = readAll(csv).split('\n');
        QVERIFY2(rows.value(0).trimmed().endsWith(",detail,found_in"), rows.value(0).constData());
        QMap<QString, QByteArray> foundIn;
        for (const QByteArray &row : rows.mid(1)) {
            const QList<QByteArray> f = row.trimmed().split(',');
            if (f.size() > 2) {
                foundIn.insert(QString::fromUtf8(f[0] + '/' + f[1]), f.last());
            }
        }
        QCOMPARE(foundIn.value("bob/scale"), QByteArray("bob/lab1/"));
        QCOMPARE(foundIn.value("bob/saxpy"), QByteArray());
        QVERIFY(foundIn.contains("carol/vector_add"));
    }

    void resumeAfterKill()
    {
        const QString journal = m_dir.filePath("killed.jsonl");
        QProcess p;
        QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
        e.insert("KPG_CUDA_DRIVER", "/nonexistent/libcuda.so.1");
        e.insert("KPG_NO_CACHE", "1"); // every compile takes its time, so the kill lands mid-way
        p.setProcessEnvironment(e);
        p.start(KpTest::program("kpg"),
                {"grade", m_lab, "--submissions", m_subs, "--no-sandbox", "--journal", journal, "--compile-jobs", "1"});
        QVERIFY(p.waitForStarted());
        QElapsedTimer clock;
        clock.start();
        while (readAll(journal).count('\n') < 4 && clock.elapsed() < 120000 && p.state() == QProcess::Running) {
            QThread::msleep(20);
        }
        QVERIFY2(p.state() == QProcess::Running, "the grading ended before it could be killed");
        p.kill();
        p.waitForFinished();
        const int linesAtKill = int(readAll(journal).count('\n'));
        QVERIFY(linesAtKill >= 4 && linesAtKill < 13);

        const QString csv = m_dir.filePath("resumed.csv");
        const KpTest::Run r = grade({"--resume", "--journal", journal, "--csv", csv});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QCOMPARE(outcomes(readAll(csv)), kNoGpuOutcomes);
        QVERIFY2(r.err.contains("kpg: resuming: "), qPrintable(r.err));
    }

    void resumeKeepsFinishedResults()
    {
        // A journal as a GPU grading leaves it when killed: four finished
        // results (one for a file changed since), and a line cut short.
        const QString journal = m_dir.filePath("gpu.jsonl");
        auto sha = [&](const QString &file) {
            return QString::fromLatin1(
                QCryptographicHash::hash(readAll(m_subs + "/" + file), QCryptographicHash::Sha256).toHex());
        };
        auto item = [](const QString &student, const QString &exercise, const QString &outcome, const QString &hash) {
            return QJsonDocument(QJsonObject{{"student", student},
                                             {"exercise", exercise},
                                             {"outcome", outcome},
                                             {"sha256", hash},
                                             {"medianMs", 0.004},
                                             {"speedRatio", 1.02}})
                       .toJson(QJsonDocument::Compact) +
                   "\n";
        };
        QByteArray j = QJsonDocument(QJsonObject{{"kpgGradeJournal", 1}, {"lab", QFileInfo(m_lab).canonicalFilePath()}})
                           .toJson(QJsonDocument::Compact) +
                       "\n";
        j += item("alice", "saxpy", "pass", sha("alice/saxpy.cu"));
        j += item("carol", "saxpy", "timeout", sha("carol/saxpy.cu"));
        j += item("dave", "scale", "fail", QString(64, QLatin1Char('0'))); // another file than today's
        j += item("bob", "scale", "not-submitted", QString());
        j += "{\"student\": \"dave\", \"exercise\": \"saxpy\", \"outc"; // the kill
        writeFile(journal, j);

        const QString json = m_dir.filePath("resumed.json");
        const KpTest::Run r = grade({"--resume", "--journal", journal, "--json", json});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.err.contains("kpg: resuming: 3 of 12 already graded"), qPrintable(r.err));
        QCOMPARE(r.err.count(QRegularExpression(R"(^\[\d+/12\] )", QRegularExpression::MultilineOption)), 9);
        QMap<QString, QString> got;
        for (const QJsonValue &v : QJsonDocument::fromJson(readAll(json)).object().value("results").toArray()) {
            got.insert(v["student"].toString() + "/" + v["exercise"].toString(), v["outcome"].toString());
        }
        QMap<QString, QString> expected = kNoGpuOutcomes;
        expected["alice/saxpy"] = "pass";    // kept, not graded again
        expected["carol/saxpy"] = "timeout"; // kept
        expected["dave/scale"] = "no-gpu";   // the file changed: graded again
        QCOMPARE(got, expected);
        QVERIFY2(r.out.contains(QRegularExpression(R"(alice\n  saxpy +pass +0\.004 ms \(1\.02x the reference\))")),
                 qPrintable(r.out));
        // The cut line was left alone and the new results start on a line of their own.
        const QList<QByteArray> lines = readAll(journal).split('\n');
        QCOMPARE(lines.count(), 1 + 4 + 1 + 9 + 1);

        // A journal of another lab is not resumed.
        QTemporaryDir other;
        copyTree(m_lab, other.path());
        const KpTest::Run wrong = KpTest::run(
            "kpg", {"grade", other.path(), "--submissions", m_subs, "--no-sandbox", "--resume", "--journal", journal},
            kNoDriver);
        QCOMPARE(wrong.exitCode, 65);
        QVERIFY2(wrong.err.contains("is of the lab " + QFileInfo(m_lab).canonicalFilePath()), qPrintable(wrong.err));
    }

    void resumeWithDamagedJournal_data()
    {
        // A journal holding alice/saxpy as a pass (line 2) and a damaged line 3:
        // one warning naming the journal and the line, and the submission the
        // line was about graded again; never the journal's word for it.
        QTest::addColumn<QByteArray>("line3");
        QTest::addColumn<QString>("warning");
        QTest::addColumn<QString>("aliceSaxpy"); // its outcome after --resume
        QTest::newRow("truncated last line") << QByteArray("{\"student\": \"alice\", \"exercise\": \"saxpy\", \"ou")
                                             << "line 3: cut short (an interrupted write); ignored, and alice/saxpy is "
                                                "graded again"
                                             << "no-gpu";
        QTest::newRow("a line that is not JSON")
            << QByteArray("<<<<<<< HEAD") << "line 3: not JSON (illegal value at byte 1); ignored"
            << "pass";
        QTest::newRow("an unknown student")
            << QByteArray(R"({"student": "zed", "exercise": "saxpy", "outcome": "pass"})")
            << "line 3: the student 'zed' has no folder in "
            << "pass";
        QTest::newRow("an unknown exercise")
            << QByteArray(R"({"student": "alice", "exercise": "histogram", "outcome": "pass"})")
            << "line 3: the exercise 'histogram' is not in the lab; ignored"
            << "pass";
        QTest::newRow("control characters")
            << QByteArray("{\"student\": \"alice\", \"exercise\": \"saxpy\", \"outcome\": \"fail\x1b[2J\"}")
            << "line 3: holds control characters, not a result the grading wrote; ignored, and alice/saxpy is graded "
               "again"
            << "no-gpu";
    }

    void resumeWithDamagedJournal()
    {
        QFETCH(QByteArray, line3);
        QFETCH(QString, warning);
        QFETCH(QString, aliceSaxpy);
        const QString journal = m_dir.filePath(QStringLiteral("damaged-%1.jsonl").arg(m_runs));
        const QString sha = QString::fromLatin1(
            QCryptographicHash::hash(readAll(m_subs + "/alice/saxpy.cu"), QCryptographicHash::Sha256).toHex());
        writeFile(journal,
                  QJsonDocument(QJsonObject{{"kpgGradeJournal", 1}, {"lab", QFileInfo(m_lab).canonicalFilePath()}})
                          .toJson(QJsonDocument::Compact) +
                      "\n" +
                      QJsonDocument(QJsonObject{{"student", "alice"},
                                                {"exercise", "saxpy"},
                                                {"outcome", "pass"},
                                                {"sha256", sha},
                                                {"medianMs", 0.004}})
                          .toJson(QJsonDocument::Compact) +
                      "\n" + line3);
        const QString csv = m_dir.filePath(QStringLiteral("damaged-%1.csv").arg(m_runs));
        const KpTest::Run r = grade({"--only", "alice", "--resume", "--journal", journal, "--csv", csv});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QString expected = "kpg: warning: the journal " + journal + ", " + warning;
        QVERIFY2(r.err.contains(expected), qPrintable(r.err));
        QCOMPARE(r.err.count("kpg: warning: the journal "), 1);
        QVERIFY(!r.err.contains(QChar(0x1b)));
        const QMap<QString, QString> got = outcomes(readAll(csv));
        QCOMPARE(got.value("alice/saxpy"), aliceSaxpy);
        QCOMPARE(got.value("alice/scale"), QString("no-gpu"));
        QCOMPARE(got.size(), 3);
    }

    void hostileSubmissions()
    {
        QTemporaryDir outside;
        writeFile(outside.filePath("vector_add.cu"), "__global__ void vectorAdd() {}\n");
        // A student folder that is a link outside, a file that is a link outside,
        // a link inside (followed), a FIFO, a formula for a name, a stray file.
        QVERIFY(QFile::link(outside.path(), m_subs + "/mallory"));
        QDir().mkpath(m_subs + "/trudy");
        QVERIFY(QFile::link("/etc/passwd", m_subs + "/trudy/vector_add.cu"));
        QVERIFY(QFile::link(m_subs + "/alice/scale.cu", m_subs + "/trudy/scale.cu"));
        QVERIFY(QProcess::execute("mkfifo", {m_subs + "/trudy/saxpy.cu"}) == 0);
        QDir().mkpath(m_subs + "/=HYPERLINK(1)");
        writeFile(m_subs + "/README.txt", "not a student\n");

        const QString csv = m_dir.filePath("hostile.csv");
        const KpTest::Run r = grade({"--csv", csv, "--only", "mallory,trudy,=HYPERLINK(1)"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.err.contains("mallory: the student folder is a symbolic link to '" + outside.path() +
                                "', outside the submissions folder; it is not read"),
                 qPrintable(r.err));
        QVERIFY2(r.err.contains("not student folders, skipped: README.txt"), qPrintable(r.err));
        const QMap<QString, QString> got = outcomes(readAll(csv));
        QCOMPARE(got.value("mallory/vector_add"), QString("refused"));
        QCOMPARE(got.value("trudy/vector_add"), QString("refused"));
        // A link to another student's file is that student's work, not trudy's.
        QCOMPARE(got.value("trudy/scale"), QString("refused"));
        QVERIFY2(r.out.contains("trudy/scale.cu: a symbolic link: same file as alice/scale.cu"), qPrintable(r.out));
        QCOMPARE(got.value("trudy/saxpy"), QString("refused"));
        QVERIFY2(
            r.out.contains("trudy/vector_add.cu: a symbolic link to '/etc/passwd', outside the submissions folder"),
            qPrintable(r.out));
        QVERIFY2(r.out.contains("trudy/saxpy.cu: cannot read"), qPrintable(r.out));
        // A spreadsheet must not run a student's folder name.
        QVERIFY2(readAll(csv).contains("\"'=HYPERLINK(1)\",saxpy,not-submitted"), readAll(csv).constData());
    }

    void submissionReadsOnlyItself_data()
    {
        QTest::addColumn<QString>("source");
        QTest::addColumn<bool>("needsSandbox");
        QTest::addColumn<QString>("error");
        QTest::newRow("the exercise's reference by name")
            << "#include \"reference.cu\"\n"
            << false << "scale.cu:1:24: cannot open source file \"reference.cu\"";
        QTest::newRow("the reference through the lab's folders")
            << "#include \"../scale/reference.cu\"\n"
            << false << "cannot open source file \"../scale/reference.cu\"";
        QTest::newRow("the reference by absolute path") << "#include \"%LAB%/scale/reference.cu\"\n"
                                                        << true << "reference.cu\": Permission denied";
        QTest::newRow("another student's file") << "#include \"%SUBS%/alice/scale.cu\"\n"
                                                << true << "alice/scale.cu\": Permission denied";
        // The compiler's sandbox refuses /proc (docs/security.md).
        QTest::newRow("the grader's environment") << "#include \"/proc/self/environ\"\n"
                                                  << true << "/proc/self/environ\": Permission denied";
    }

    void submissionReadsOnlyItself()
    {
        QFETCH(QString, source);
        QFETCH(bool, needsSandbox);
        QFETCH(QString, error);
        const Kp::Sandbox::Availability sandbox = Kp::Sandbox::availability();
        if (needsSandbox && !sandbox.sandboxed) {
            QSKIP(qPrintable("only the compiler sandbox refuses absolute paths, and here it is " + sandbox.text));
        }
        source.replace("%LAB%", m_lab).replace("%SUBS%", m_subs);
        writeFile(m_subs + "/eve/scale.cu", source.toUtf8());
        const QString json = m_dir.filePath(QStringLiteral("eve-%1.json").arg(m_runs));
        // A secret in the grader's environment must reach no output, whatever the sandbox lets through.
        QStringList env = kNoDriver;
        env << "KPG_TEST_GRADER_SECRET=hunter2-in-the-environment";
        QStringList args{"grade", m_lab, "--submissions", m_subs, "--only", "eve", "--json", json};
        if (!sandbox.sandboxed) {
            args << "--no-sandbox";
        }
        const KpTest::Run r = KpTest::run("kpg", args, env, 240000);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonArray results = QJsonDocument::fromJson(readAll(json)).object().value("results").toArray();
        QJsonObject scale;
        for (const QJsonValue &v : results) {
            if (v["exercise"].toString() == "scale") {
                scale = v.toObject();
            }
        }
        QCOMPARE(scale.value("outcome").toString(), QString("compile-error"));
        QVERIFY2(scale.value("detail").toString().contains(error), qPrintable(scale.value("detail").toString()));
        for (const QByteArray &text :
             {r.out.toUtf8(), r.err.toUtf8(), readAll(json), readAll(json + ".journal.jsonl")}) {
            QVERIFY(!text.contains("hunter2"));
        }
    }

    void journalNotBesideStdout()
    {
        const QString csv = m_dir.filePath("stdout.csv");
        const KpTest::Run r = grade({"--only", "bob", "--json", "/dev/stdout", "--csv", csv});
        QCOMPARE(r.exitCode, 0);
        // stdout is the JSON alone; the journal went beside the CSV, a regular file.
        QCOMPARE(QJsonDocument::fromJson(r.out.toUtf8()).object().value("results").toArray().size(), 3);
        QCOMPARE(readAll(csv + ".journal.jsonl").count('\n'), 4);
        QVERIFY(!QFile::exists("/dev/stdout.journal.jsonl"));
        QVERIFY2(r.err.contains("saxpy       0 of 1 passed (1 compile error)"), qPrintable(r.err));
    }

    void controlCharactersInEveryStream()
    {
        const QString evil = QString("eve\x1b[2J") + QChar(0x202E) + "x";
        writeFile(m_subs + "/" + evil + "/scale.cu", readAll(m_subs + "/alice/scale.cu") + "// mine\n");
        const QString csv = m_dir.filePath("evil.csv");
        const QString book = m_dir.filePath("evil-book.csv");
        const KpTest::Run r = grade({"--only", evil, "--csv", csv, "--gradebook", book, "--autolab"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        // The progress lines on stderr, the table and the exports: the name with '?' for each control character.
        QVERIFY2(r.err.contains("/3] eve?[2J?x/scale: no GPU"), qPrintable(r.err));
        QVERIFY2(r.out.contains("eve?[2J?x\n"), qPrintable(r.out));
        for (const QByteArray &text : {r.out.toUtf8(), r.err.toUtf8(), readAll(csv), readAll(book)}) {
            QVERIFY(!text.contains('\x1b'));
            QVERIFY(!QString::fromUtf8(text).contains(QChar(0x202E)));
        }
        QVERIFY(readAll(book).contains("eve?[2J?x,0,30,0,0,0,0"));
    }

    void exports()
    {
        // A renamed copy of alice's vector_add, a policy, zip residue.
        QByteArray copy = readAll(m_subs + "/alice/vector_add.cu");
        copy.replace("int i", "int idx").replace("[i]", "[idx]").replace("i < n", "idx < n");
        copy.prepend("// all my own work\n");
        writeFile(m_subs + "/dave/vector_add.cu", copy);
        QDir().mkpath(m_subs + "/__MACOSX/alice");
        QDir().mkpath(m_subs + "/.ipynb_checkpoints");
        writeFile(m_lab + "/grading.json", R"({"default": {"points": 5}, "exercises": {"scale": {"points": 20}}})");
        const QString book = m_dir.filePath("book.csv");
        const QString gs = m_dir.filePath("gradescope");
        const QString fb = m_dir.filePath("feedback");
        const QString plag = m_dir.filePath("plagiarism.csv");
        const KpTest::Run r = grade({"--gradebook", book, "--gradescope", gs, "--feedback", fb, "--plagiarism", plag,
                                     "--csv", m_dir.filePath("exports.csv")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(!r.err.contains("__MACOSX") && !r.out.contains("__MACOSX"), qPrintable(r.err));
        const QList<QByteArray> rows = readAll(book).trimmed().split('\n');
        QCOMPARE(rows.size(), 5);
        QCOMPARE(rows[0].trimmed(), QByteArray("student,total,max,late_penalty_percent,saxpy,scale,vector_add"));
        QVERIFY(rows[1].startsWith("alice,0,30,0,"));
        // The plagiarism report and its summary line.
        QVERIFY2(readAll(plag).contains("vector_add,alice,dave,"), readAll(plag).constData());
        QVERIFY2(r.err.contains("kpg: plagiarism: "), qPrintable(r.err));
        // Gradescope: a results.json per student, with the documented keys.
        for (const QString &student : QStringList{"alice", "bob", "carol", "dave"}) {
            const QJsonObject o = QJsonDocument::fromJson(readAll(gs + "/" + student + "/results.json")).object();
            QVERIFY2(o.value("score").isDouble(), qPrintable(student));
            QCOMPARE(o.value("tests").toArray().size(), 3);
            QVERIFY(QFile::exists(fb + "/" + student + ".md"));
            QVERIFY(QFile::exists(fb + "/" + student + ".html"));
        }
        QVERIFY2(readAll(fb + "/bob.md").contains("saxpy.cu:5:5: expected a \";\""),
                 readAll(fb + "/bob.md").constData());
        // Autolab: the last line of stdout for one student.
        const KpTest::Run one = grade({"--only", "alice", "--autolab", "--journal", m_dir.filePath("autolab.jsonl")});
        QCOMPARE(one.exitCode, 0);
        const QJsonObject last = QJsonDocument::fromJson(one.out.trimmed().split('\n').last().toUtf8()).object();
        QCOMPARE(last.value("scores").toObject().keys(), QStringList({"saxpy", "scale", "vector_add"}));
    }

    void exportStarter()
    {
        const QString policyLab = QStringLiteral(KPG_SOURCE_DIR "/tests/data/lab-policy");
        const QString outDir = m_dir.filePath(QStringLiteral("students-%1").arg(m_runs));
        const KpTest::Run r = KpTest::run("kpg", {"lab", "export-starter", policyLab, outDir});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("wrote the students' copy of lab-policy"), qPrintable(r.out));
        QVERIFY(!readAll(outDir + "/scale/scale.kpg").contains("hidden"));
        QVERIFY(!QFile::exists(outDir + "/scale/reference.cu"));
        QVERIFY(!QFile::exists(outDir + "/grading.json"));
        QVERIFY(!QFile::exists(outDir + "/grading-salt"));
        const KpTest::Run again = KpTest::run("kpg", {"lab", "export-starter", policyLab, outDir});
        QCOMPARE(again.exitCode, 65);
        const KpTest::Run usage = KpTest::run("kpg", {"lab", "export", policyLab});
        QCOMPARE(usage.exitCode, 64);
        QVERIFY2(usage.err.contains("the one subcommand is export-starter"), qPrintable(usage.err));
    }

    void badInput_data()
    {
        QTest::addColumn<QString>("setup");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("message");
        QTest::newRow("no such lab") << "nolab" << 65 << "lab '%LAB%-missing': no such folder";
        QTest::newRow("empty lab") << "emptylab" << 65 << "no exercises: expected NAME.kpg files in the folder";
        QTest::newRow("no such submissions") << "nosubs" << 65 << "--submissions '%SUBS%-missing': no such folder";
        QTest::newRow("empty submissions") << "emptysubs" << 65 << "no student folders in it";
        QTest::newRow("exercise without checks") << "nochecks" << 65 << "scale.kpg: the exercise has no checks";
        QTest::newRow("bad speed target")
            << "badspeedup" << 65 << "scale.kpg: grading.speedup: must be greater than 0, got -1";
        QTest::newRow("speed target without reference")
            << "speedupnoref" << 65 << "grading.speedup: a speed target needs a reference kernel to compare with";
        QTest::newRow("reference outside the lab") << "refoutside" << 65 << "scale.kpg: reference.source: '../../x.cu'";
        QTest::newRow("broken reference")
            << "badref" << 65
            << "the reference (reference.cu) does not pass as a submission (compiled without a GPU): "
               "compile error: reference.cu:4:";
        QTest::newRow("reference needing a header of the lab")
            << "refheader" << 65
            << "the reference (reference.cu) does not pass as a submission (compiled without a GPU): compile error: "
               "reference.cu:1:";
        QTest::newRow("unknown student") << "only" << 64 << "grade: --only: no student folder 'zed'";
        QTest::newRow("no submissions option") << "nosubsopt" << 64 << "give a lab folder and --submissions DIR";
        QTest::newRow("bad grading policy")
            << "badpolicy" << 65
            << "grading.json: exercises.scale.weight: must be a number from 0 to 1000000, got \"2\"";
        QTest::newRow("missing salt file") << "saltfile" << 65 << "--seed-salt: ";
        QTest::newRow("empty salt file") << "emptysalt" << 65 << "is empty; write a secret line of text in it";
        QTest::newRow("unknown sanitizer") << "sanitize" << 64 << "grade: --sanitize takes memcheck, not 'racecheck'";
        QTest::newRow("bad manifest") << "manifest" << 65 << "manifest.csv:2: time 'noon' is not ISO 8601";
        QTest::newRow("sandbox off")
            << "sandbox" << 69 << "compiled only in the compiler sandbox, and here it is off (KPG_COMPILER_SANDBOX=0)";
    }

    void badInput()
    {
        QFETCH(QString, setup);
        QFETCH(int, exitCode);
        QFETCH(QString, message);
        QString lab = m_lab;
        QString subs = m_subs;
        QStringList extra{"--no-sandbox"};
        QStringList env = kNoDriver;
        const QString scaleKpg = m_lab + "/scale/scale.kpg";
        auto editScale = [&](const QByteArray &from, const QByteArray &to) {
            QByteArray t = readAll(scaleKpg);
            QVERIFY(t.contains(from));
            t.replace(from, to);
            writeFile(scaleKpg, t);
        };
        if (setup == "nolab") {
            lab += "-missing";
        } else if (setup == "emptylab") {
            lab = m_dir.filePath("empty-lab");
            QDir().mkpath(lab);
        } else if (setup == "nosubs") {
            subs += "-missing";
        } else if (setup == "emptysubs") {
            subs = m_dir.filePath("empty-subs");
            QDir().mkpath(subs);
            writeFile(subs + "/notes.txt", "x");
        } else if (setup == "nochecks") {
            editScale(R"("checks": [{"name": "out = 3 in", "buffer": "out", "expected": "3 * in"}])",
                      R"("checks": [])");
        } else if (setup == "badspeedup") {
            editScale(R"("timeout": 5,)", R"("timeout": 5, "grading": {"speedup": -1},)");
        } else if (setup == "speedupnoref") {
            editScale(R"("reference": {"source": "reference.cu"},)", R"("grading": {"speedup": 1},)");
        } else if (setup == "refoutside") {
            editScale(R"("reference": {"source": "reference.cu"})", R"("reference": {"source": "../../x.cu"})");
        } else if (setup == "badref") {
            writeFile(
                m_lab + "/scale/reference.cu",
                "__global__ void scale(const int *in, int *out, int n)\n{\n    int i = 0;\n    out[i] = in[i] +;\n}\n");
        } else if (setup == "only") {
            extra << "--only"
                  << "alice,zed";
        } else if (setup == "refheader") {
            // Submissions compile with no folder of the lab readable; the reference is checked the same way.
            writeFile(m_lab + "/scale/three.h", "#define THREE 3\n");
            writeFile(m_lab + "/scale/reference.cu",
                      "#include \"three.h\"\n" +
                          readAll(m_lab + "/scale/reference.cu").replace("3 * in", "THREE * in"));
        } else if (setup == "badpolicy") {
            writeFile(m_lab + "/grading.json", R"({"exercises": {"scale": {"weight": "2"}}})");
        } else if (setup == "saltfile") {
            extra << "--seed-salt"
                  << "@" + m_dir.filePath("no-such-salt");
        } else if (setup == "emptysalt") {
            writeFile(m_lab + "/grading-salt", "\n");
        } else if (setup == "sanitize") {
            extra << "--sanitize"
                  << "racecheck";
        } else if (setup == "manifest") {
            writeFile(m_dir.filePath("manifest.csv"), "student,time\nalice,noon\n");
            extra << "--manifest" << m_dir.filePath("manifest.csv") << "--gradebook" << m_dir.filePath("m.csv");
        } else if (setup == "sandbox") {
            extra.clear();
            env << "KPG_COMPILER_SANDBOX=0";
        }
        const KpTest::Run r = setup == "nosubsopt"
                                  ? KpTest::run("kpg", {"grade", lab}, env)
                                  : KpTest::run("kpg", QStringList{"grade", lab, "--submissions", subs} + extra, env);
        message.replace("%LAB%", m_lab).replace("%SUBS%", m_subs);
        QVERIFY2(r.exitCode == exitCode, qPrintable(QString::number(r.exitCode) + ": " + r.err));
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
    }
};

QTEST_GUILESS_MAIN(TestCliGrade)
#include "tst_cli_grade.moc"

// The grading engine without a GPU: a guard hit in a recorded run fails the
// submission in words, printf cut short is its own outcome; links and hard
// links to other students' files are refused; identical and renamed copies
// are found by the plagiarism fingerprints; the seed salt changes every
// random input; hidden checks stay out of the students' copy; the policy's
// points, partial credit, speed credit and late penalty; the gradebook,
// feedback, Gradescope and Autolab exports against their documented shapes;
// control characters never reach a stream. The CLI side is tst_cli_grade.

#include "compile/compiler.h"
#include "grade/gradeexport.h"
#include "grade/grader.h"
#include "grade/integrity.h"
#include "grade/lab.h"
#include "grade/policy.h"
#include "project/projectio.h"
#include "run/projectcompile.h"
#include "run/runner.h"
#include "run/runrequest.h"
#include "run/sentinel.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <cstring>

#include <unistd.h>

using namespace Kp;
using namespace Kp::Grade;

Q_DECLARE_METATYPE(Kp::RunRequest)

namespace {

const QString kPolicyLab = QStringLiteral(KPG_SOURCE_DIR "/tests/data/lab-policy");
const QString kLab = QStringLiteral(KPG_SOURCE_DIR "/tests/data/lab/exercises");

/**
 * Where kpg grade's sentinel goes for a project: compiled with NVRTC and
 * prepared as a run is, "STEP:BUFFER" for each buffer filled before each
 * launch of that step (step numbers from 0), or "error: ..." on failure.
 */
QStringList sentinelPlan(const QString &kpgPath)
{
    const Result<Project> p = loadProject(kpgPath);
    if (!p) {
        return {"error: " + p.error().message};
    }
    const auto compiled = Compiler(Compiler::Config{QStringLiteral("-"), 0}).compile(compileRequestFor(*p));
    if (!compiled || !compiled->ok) {
        return {"error: " + (compiled ? compiled->log : compiled.error().message)};
    }
    HostBuffers buffers;
    if (const Status s = buffers.materialize(*p, true, HostBuffers::Fill::ShapesOnly); !s) {
        return {"error: " + s.error().message};
    }
    const Result<PreparedRun> prepared = prepareRun(*p, *compiled, buffers, 0);
    if (!prepared) {
        return {"error: " + prepared.error().message};
    }
    RunRequest r = prepared->request;
    r.sentinelBuffers = sentinelBuffersFor(*p, r);
    const QList<QList<int>> before = sentinelBeforeSteps(r);
    if (before.size() != r.steps.size()) {
        return {"error: a list per step expected"};
    }
    QStringList plan;
    for (qsizetype i = 0; i < before.size(); ++i) {
        for (int b : before[i]) {
            plan << QStringLiteral("%1:%2").arg(i).arg(r.buffers[b].name);
        }
    }
    return plan;
}

void writeFile(const QString &path, const QByteArray &data)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(data);
}

QByteArray readAll(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

/** A guard violation as the worker records it: bytes [first, last] relative to the buffer's start. */
GuardViolation hit(const QString &buffer, qint64 bufferBytes, int elementBytes, qint64 first, qint64 last)
{
    GuardViolation v;
    v.step = 0;
    v.kernel = QStringLiteral("scale");
    v.buffer = buffer;
    v.bufferBytes = bufferBytes;
    v.elementBytes = elementBytes;
    v.side = first >= bufferBytes ? GuardViolation::Side::After : GuardViolation::Side::Before;
    v.firstByte = first;
    v.lastByte = last;
    v.changedBytes = last - first + 1;
    return v;
}

/** A checked run of the scale exercise as a worker returns it: ran, compiled, the checks' results. */
CheckedRun recordedRun(bool checkPassed)
{
    CheckedRun c;
    c.compiled = CompileResult{};
    c.compiled->ok = true;
    c.ran = true;
    c.run.guards = true;
    StepResult s;
    s.kernel = QStringLiteral("scale");
    s.firstRunMs = 0.004;
    c.run.steps << s;
    CheckResult r;
    r.name = QStringLiteral("out = 3 in");
    r.buffer = QStringLiteral("out");
    r.passed = checkPassed;
    r.compared = 2000;
    r.mismatches = checkPassed ? 0 : 1;
    r.axes = 1;
    if (!checkPassed) {
        CheckMismatch m;
        m.index = 1999;
        m.coords = {1999, 0, 0};
        m.got = 0;
        m.expected = 6;
        r.first << m;
    }
    c.checks << r;
    return c;
}

GradeItem item(const QString &student, const QString &exercise, Outcome outcome)
{
    GradeItem i;
    i.student = student;
    i.exercise = exercise;
    i.outcome = outcome;
    return i;
}

} // namespace

class TestGrade : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void guardHit_data()
    {
        QTest::addColumn<bool>("checkPassed");
        QTest::addColumn<QList<GuardViolation>>("hits");
        QTest::addColumn<bool>("printfFlood");
        QTest::addColumn<QString>("outcome");
        QTest::addColumn<QString>("detail");
        QTest::newRow("i <= n: one element past the end, checks pass")
            << true << QList<GuardViolation>{hit("out", 8000, 4, 8000, 8003)} << false << "fail"
            << "wrote outside `out` (element 2000, 4 bytes past the end)";
        QTest::newRow("past the end and a failed check: both said")
            << false << QList<GuardViolation>{hit("out", 8000, 4, 8000, 8031)} << false << "fail"
            << "wrote outside `out` (elements 2000..2007, 32 bytes past the end); check 'out = 3 in' failed: 1 of "
               "2000 differ (0.05 %)";
        QTest::newRow("before the start, two buffers")
            << true << QList<GuardViolation>{hit("in", 8000, 4, -8, -1), hit("out", 8000, 4, 8000, 8003)} << false
            << "fail"
            << "wrote outside `in` (elements -2..-1, 8 bytes before the start) and 1 more";
        QTest::newRow("the same guard again after the timing samples")
            << true << QList<GuardViolation>{hit("out", 8000, 4, 8000, 8003), hit("out", 8000, 4, 8000, 8003)} << false
            << "fail"
            << "wrote outside `out` (element 2000, 4 bytes past the end)";
        QTest::newRow("no guard hit: a pass") << true << QList<GuardViolation>{} << false << "pass"
                                              << "";
        QTest::newRow("printf flood is its own outcome") << true << QList<GuardViolation>{} << true << "printf-flood"
                                                         << "printf output cut at 3 lines";
    }

    void guardHit()
    {
        QFETCH(bool, checkPassed);
        QFETCH(QList<GuardViolation>, hits);
        QFETCH(bool, printfFlood);
        QFETCH(QString, outcome);
        QFETCH(QString, detail);
        CheckedRun c = recordedRun(checkPassed);
        c.run.guardViolations = hits;
        if (printfFlood) {
            c.run.steps.first().printfOutput = QStringLiteral("x\ny\nz\n");
            c.run.steps.first().printfTruncated = true;
        }
        // Through the worker's own encoding, as a journal or a worker reply carries it.
        c.run = RunResult::fromVariant(c.run.toVariant());
        GradeItem i;
        i.student = "alice";
        i.exercise = "scale";
        classifyRun(c, &i);
        QCOMPARE(outcomeKey(i.outcome), outcome);
        QCOMPARE(i.detail, detail);
        if (!hits.isEmpty()) {
            QVERIFY(detail.startsWith(i.wroteOutside));
        }
        // The journal keeps it.
        const std::optional<GradeItem> back = GradeItem::fromJson(i.toJson());
        QVERIFY(back);
        QCOMPARE(back->wroteOutside, i.wroteOutside);
        QCOMPARE(back->outcome, i.outcome);
    }

    void links_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("outcome");
        QTest::addColumn<QString>("why");
        QTest::newRow("own file") << "plain"
                                  << "ok"
                                  << "";
        QTest::newRow("symbolic link inside the own folder") << "ownlink"
                                                             << "ok"
                                                             << "";
        QTest::newRow("symbolic link to another student's file")
            << "symlink"
            << "refused"
            << "a symbolic link: same file as bob/scale.cu; not graded as this student's work";
        QTest::newRow("hard link to another student's file")
            << "hardlink"
            << "refused"
            << "a hard link: same file as bob/scale.cu; not graded as this student's work";
        QTest::newRow("hard link to a file outside the submissions")
            << "hardoutside"
            << "refused"
            << "a hard link (2 names for one file), the others not in the student's folder; it is not read";
        QTest::newRow("student folder linking to another student's")
            << "folderlink"
            << "refused"
            << "the student folder is a symbolic link to 'bob': the same files as bob; not graded as this student's "
               "work";
    }

    void links()
    {
        QFETCH(QString, kind);
        QFETCH(QString, outcome);
        QFETCH(QString, why);
        QTemporaryDir dir;
        const QString subs = dir.filePath("submissions");
        const QByteArray src = "__global__ void scale(const int *in, int *out, int n) {}\n";
        writeFile(subs + "/bob/scale.cu", src);
        writeFile(dir.filePath("outside/scale.cu"), src);
        QDir().mkpath(subs + "/alice");
        QDir().mkpath(subs + "/__MACOSX/alice"); // zip residue: never a student
        const QString alice = subs + "/alice/scale.cu";
        if (kind == "plain") {
            writeFile(alice, src);
        } else if (kind == "ownlink") {
            writeFile(subs + "/alice/mine.cu", src);
            QVERIFY(QFile::link("mine.cu", alice));
        } else if (kind == "symlink") {
            QVERIFY(QFile::link("../bob/scale.cu", alice));
        } else if (kind == "hardlink") {
            QCOMPARE(
                ::link(QFile::encodeName(subs + "/bob/scale.cu").constData(), QFile::encodeName(alice).constData()), 0);
        } else if (kind == "hardoutside") {
            QCOMPARE(::link(QFile::encodeName(dir.filePath("outside/scale.cu")).constData(),
                            QFile::encodeName(alice).constData()),
                     0);
        } else if (kind == "folderlink") {
            QVERIFY(QDir(subs + "/alice").removeRecursively());
            QVERIFY(QFile::link("bob", subs + "/alice"));
        }
        const Result<QList<Student>> students = findStudents(subs, nullptr, LabPolicy{}.ignore);
        QVERIFY(students);
        QStringList names;
        for (const Student &s : *students) {
            names << s.name;
        }
        QCOMPARE(names, QStringList({"alice", "bob"}));
        const LinkIndex links = LinkIndex::build(subs);
        const Submission a = readSubmission(students->first(), "scale", subs, &links);
        QCOMPARE(a.state == Submission::State::Ok ? QString("ok") : QString("refused"), outcome);
        QCOMPARE(a.why, why);
        if (outcome == "ok") {
            QCOMPARE(a.source.toUtf8(), src);
        }
    }

    void nestedSubmissions_data()
    {
        // Files of the submissions folder: "PATH" (a file), "PATH -> TARGET"
        // (a symbolic link), "PATH => OTHER" (a hard link to OTHER). bob has
        // bob/transpose.cu and bob/lab1/transpose.cu in every row.
        QTest::addColumn<QStringList>("files");
        QTest::addColumn<QString>("state"); // ok, missing, refused
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("foundIn");
        QTest::addColumn<QString>("why");
        QTest::newRow("one folder deeper") << QStringList{"alice/lab1/transpose.cu"} << "ok"
                                           << "alice/lab1/transpose.cu"
                                           << "alice/lab1/"
                                           << "";
        QTest::newRow("a folder named after the student") << QStringList{"alice/alice/transpose.cu"} << "ok"
                                                          << "alice/alice/transpose.cu"
                                                          << "alice/alice/"
                                                          << "";
        QTest::newRow("two folders deeper")
            << QStringList{"alice/Submission/src/transpose.cu", "alice/Submission/README"} << "ok"
            << "alice/Submission/src/transpose.cu"
            << "alice/Submission/src/"
            << "";
        QTest::newRow("the top wins over a deeper copy")
            << QStringList{"alice/transpose.cu", "alice/old/transpose.cu"} << "ok"
            << "alice/transpose.cu"
            << ""
            << "";
        QTest::newRow("two candidates: one message naming both")
            << QStringList{"alice/v1/transpose.cu", "alice/v2/transpose.cu"} << "refused"
            << "alice/transpose.cu"
            << ""
            << "2 files named transpose.cu in the student's folder (alice/v1/transpose.cu, alice/v2/transpose.cu) and "
               "none at its top; keep the one to grade (or move it to alice/transpose.cu)";
        QTest::newRow("zip residue is not a candidate")
            << QStringList{"alice/__MACOSX/lab1/transpose.cu", "alice/lab1/._transpose.cu", "alice/lab1/transpose.cu"}
            << "ok"
            << "alice/lab1/transpose.cu"
            << "alice/lab1/"
            << "";
        QTest::newRow("only in a dot folder: missing")
            << QStringList{"alice/.ipynb_checkpoints/transpose.cu"} << "missing"
            << "alice/transpose.cu"
            << ""
            << "";
        QTest::newRow("another name's case: missing") << QStringList{"alice/lab1/Transpose.cu"} << "missing"
                                                      << "alice/transpose.cu"
                                                      << ""
                                                      << "";
        QTest::newRow("a link to another student's folder is not followed")
            << QStringList{"alice/lab1 -> ../bob/lab1"} << "missing"
            << "alice/transpose.cu"
            << ""
            << "";
        QTest::newRow("a deeper symbolic link to another student's file")
            << QStringList{"alice/lab1/transpose.cu -> ../../bob/transpose.cu"} << "refused"
            << "alice/lab1/transpose.cu"
            << "alice/lab1/"
            << "a symbolic link: same file as bob/transpose.cu; not graded as this student's work";
        QTest::newRow("a deeper hard link to another student's deeper file")
            << QStringList{"alice/lab1/transpose.cu => bob/lab1/transpose.cu"} << "refused"
            << "alice/lab1/transpose.cu"
            << "alice/lab1/"
            << "a hard link: same file as bob/lab1/transpose.cu; not graded as this student's work";
        QTest::newRow("nine folders deep is past the walk")
            << QStringList{"alice/1/2/3/4/5/6/7/8/9/transpose.cu"} << "missing"
            << "alice/transpose.cu"
            << ""
            << "";
    }

    void nestedSubmissions()
    {
        QFETCH(QStringList, files);
        QFETCH(QString, state);
        QFETCH(QString, path);
        QFETCH(QString, foundIn);
        QFETCH(QString, why);
        QTemporaryDir dir;
        const QString subs = dir.filePath("submissions");
        const QByteArray src = "__global__ void transpose(const float *in, float *out, int w, int h) {}\n";
        writeFile(subs + "/bob/transpose.cu", "// bob\n" + src);
        writeFile(subs + "/bob/lab1/transpose.cu", "// bob, lab1\n" + src);
        for (const QString &f : files) {
            if (f.contains(" -> ")) {
                const QString link = subs + "/" + f.section(" -> ", 0, 0);
                QDir().mkpath(QFileInfo(link).absolutePath());
                QVERIFY(QFile::link(f.section(" -> ", 1), link));
            } else if (f.contains(" => ")) {
                const QString link = subs + "/" + f.section(" => ", 0, 0);
                QDir().mkpath(QFileInfo(link).absolutePath());
                QCOMPARE(::link(QFile::encodeName(subs + "/" + f.section(" => ", 1)).constData(),
                                QFile::encodeName(link).constData()),
                         0);
            } else {
                writeFile(subs + "/" + f, "// " + f.toUtf8() + "\n" + src);
            }
        }
        const Result<QList<Student>> students = findStudents(subs, nullptr, LabPolicy{}.ignore);
        QVERIFY(students);
        QCOMPARE(students->first().name, QString("alice"));
        const LinkIndex links = LinkIndex::build(subs);
        const Submission sub = readSubmission(students->first(), "transpose", subs, &links, LabPolicy{}.ignore);
        const QString got = sub.state == Submission::State::Ok        ? "ok"
                            : sub.state == Submission::State::Missing ? "missing"
                                                                      : "refused";
        QVERIFY2(got == state, qPrintable(got + ": " + sub.why));
        QCOMPARE(sub.path, path);
        QCOMPARE(sub.foundIn, foundIn);
        QCOMPARE(sub.why, why);
        if (state == "ok") {
            // The file graded is the one named, not bob's.
            QVERIFY2(sub.source.startsWith("// " + path), qPrintable(sub.source));
            QCOMPARE(QFileInfo(sub.file).canonicalFilePath(), QFileInfo(subs + "/" + path).canonicalFilePath());
        }
        // The note travels with the result: the journal, the table and the feedback.
        GradeItem i = item("alice", "transpose", Outcome::Pass);
        i.foundIn = sub.foundIn;
        QCOMPARE(GradeItem::fromJson(i.toJson())->foundIn, foundIn);
        QCOMPARE(tableText({"transpose"}, {i}).contains("found in " + foundIn), !foundIn.isEmpty());
    }

    void damagedJournal_data()
    {
        // A journal after a header and alice/scale's result (line 2): what the
        // damaged line 3 costs. Warnings as they follow "the journal PATH, ".
        QTest::addColumn<QByteArray>("line3");
        QTest::addColumn<QStringList>("kept");
        QTest::addColumn<QStringList>("warnings");
        QTest::newRow("truncated last line (an interrupted write)")
            << QByteArray("{\"student\": \"bob\", \"exercise\": \"scale\", \"outc") << QStringList{"alice/scale"}
            << QStringList{"line 3: cut short (an interrupted write); ignored, and bob/scale is graded again"};
        QTest::newRow("a cut line with results after it")
            << QByteArray("{\"student\": \"bob\", \"exercise\": \"scale\", \"outc"
                          "\n"
                          R"({"student": "carol", "exercise": "scale", "outcome": "fail"})")
            << QStringList{"alice/scale", "carol/scale"}
            << QStringList{"line 3: cut short (an interrupted write); ignored, and bob/scale is graded again"};
        QTest::newRow("a line that is not JSON") << QByteArray("grading went fine") << QStringList{"alice/scale"}
                                                 << QStringList{"line 3: not JSON (illegal value at byte 1); ignored"};
        QTest::newRow("a damaged later line of a result drops the earlier one")
            << QByteArray(R"({"student": "alice", "exercise": "scale", "outcome": "fail",, "sha256": ""})")
            << QStringList{}
            << QStringList{
                   "line 3: not JSON (unterminated object at byte 61); ignored, and alice/scale is graded again"};
        QTest::newRow("a later good line wins over a damaged one")
            << QByteArray(R"({"student": "alice", "exercise": "scale", "outcome": "fail",,})"
                          "\n"
                          R"({"student": "alice", "exercise": "scale", "outcome": "fail"})")
            << QStringList{"alice/scale"}
            << QStringList{
                   "line 3: not JSON (unterminated object at byte 61); ignored, and alice/scale is graded again"};
        QTest::newRow("raw control characters")
            << QByteArray("{\"student\": \"alice\", \"exercise\": \"scale\", \"outcome\": \"pass\x1b[2J\"}")
            << QStringList{}
            << QStringList{"line 3: holds control characters, not a result the grading wrote; ignored, and "
                           "alice/scale is graded again"};
        QTest::newRow("a NUL byte") << QByteArray("{\"student\": \"bob\"\0}", 19) << QStringList{"alice/scale"}
                                    << QStringList{"line 3: holds control characters, not a result the grading wrote; "
                                                   "ignored"};
        QTest::newRow("an outcome kpg grade never writes")
            << QByteArray("{\"student\": \"bob\", \"exercise\": \"scale\", \"outcome\": \"\\u001b[31mpassed\"}")
            << QStringList{"alice/scale"}
            << QStringList{"line 3: not a result (outcome '?[31mpassed' is not one kpg grade writes); ignored, and "
                           "bob/scale is graded again"};
        QTest::newRow("not an object") << QByteArray("[1, 2]") << QStringList{"alice/scale"}
                                       << QStringList{"line 3: not a JSON object; ignored"};
        QTest::newRow("escaped control characters in a name are a result")
            << QByteArray("{\"student\": \"eve\\u001b[2J\", \"exercise\": \"scale\", \"outcome\": \"pass\"}")
            << QStringList{"alice/scale", "eve\x1b[2J/scale"} << QStringList{};
        QTest::newRow("Windows line ends") << QByteArray("{\"student\": \"bob\", \"exercise\": \"scale\", "
                                                         "\"outcome\": \"fail\"}\r")
                                           << QStringList{"alice/scale", "bob/scale"} << QStringList{};
    }

    void damagedJournal()
    {
        QFETCH(QByteArray, line3);
        QFETCH(QStringList, kept);
        QFETCH(QStringList, warnings);
        QTemporaryDir dir;
        const QString path = dir.filePath("grade.journal.jsonl");
        writeFile(path,
                  "{\"kpgGradeJournal\": 1, \"lab\": \"/lab\"}\n"
                  "{\"student\": \"alice\", \"exercise\": \"scale\", \"outcome\": \"pass\", \"sha256\": \"ab\"}\n" +
                      line3);
        QString lab;
        QStringList got;
        QHash<QString, int> lineOf;
        const Result<QList<GradeItem>> items = Journal::read(path, &lab, &got, &lineOf);
        QVERIFY(items);
        QCOMPARE(lab, QString("/lab"));
        QStringList keys;
        for (const GradeItem &i : *items) {
            keys << i.key();
        }
        QCOMPARE(keys, kept);
        if (kept.contains("alice/scale")) {
            QCOMPARE(lineOf.value("alice/scale"), line3.contains("\"alice\", \"exercise\": \"scale\", \"outcome\": "
                                                                 "\"fail\"}")
                                                      ? 4
                                                      : 2);
        }
        const QString prefix = "the journal " + path + ", ";
        for (QString &w : got) {
            QVERIFY2(w.startsWith(prefix), qPrintable(w));
            w = w.mid(prefix.size());
        }
        QCOMPARE(got, warnings);
    }

    void similarity_data()
    {
        QTest::addColumn<QString>("a");
        QTest::addColumn<QString>("b");
        QTest::addColumn<bool>("reported");
        QTest::addColumn<bool>("identical");
        const QString tiled = R"(// Tiled transpose with shared memory.
__global__ void transpose(const float *in, float *out, int w, int h)
{
    __shared__ float tile[32][33];
    int x = blockIdx.x * 32 + threadIdx.x;
    int y = blockIdx.y * 32 + threadIdx.y;
    if (x < w && y < h) tile[threadIdx.y][threadIdx.x] = in[y * w + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    if (x < h && y < w) out[y * h + x] = tile[threadIdx.x][threadIdx.y];
}
)";
        const QString renamed = R"(/* my own work, honest */
__global__ void transpose(const float *src, float *dst, int width, int height) {
  __shared__ float buf[32][33];   // padded
  int col = blockIdx.x*32+threadIdx.x; int row = blockIdx.y*32+threadIdx.y;
  if (col < width && row < height) buf[threadIdx.y][threadIdx.x] = src[row*width+col];
  __syncthreads();
  col = blockIdx.y*32+threadIdx.x;
  row = blockIdx.x*32+threadIdx.y;
  if (col < height && row < width) dst[row*height+col] = buf[threadIdx.x][threadIdx.y];
}
)";
        const QString naive = R"(__global__ void transpose(const float *in, float *out, int w, int h)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < w * h; i += gridDim.x * blockDim.x) {
        const int r = i / w;
        const int c = i % w;
        out[c * h + r] = in[i];
    }
}
)";
        QTest::newRow("identical files") << tiled << tiled << true << true;
        QTest::newRow("renamed, reformatted, other comments") << tiled << renamed << true << false;
        QTest::newRow("another algorithm") << tiled << naive << false << false;
        QTest::newRow("both hand in the starter") << "starter"
                                                  << "starter" << false << false;
    }

    void similarity()
    {
        QFETCH(QString, a);
        QFETCH(QString, b);
        QFETCH(bool, reported);
        QFETCH(bool, identical);
        const QString starter = "__global__ void transpose(const float *in, float *out, int w, int h)\n{\n}\n";
        ExerciseSources es;
        es.exercise = "transpose";
        es.starter = starter;
        for (const auto &[student, text] :
             {std::pair{QStringLiteral("alice"), a}, std::pair{QStringLiteral("bob"), b}}) {
            const QString t = text == "starter" ? starter : text;
            es.sources.insert(student, t);
            es.sha256Hex.insert(student, QCryptographicHash::hash(t.toUtf8(), QCryptographicHash::Sha256).toHex());
        }
        const QList<SimilarPair> pairs = findSimilar({es});
        QCOMPARE(!pairs.isEmpty(), reported);
        if (reported) {
            QCOMPARE(pairs.first().identical, identical);
            QCOMPARE(pairs.first().studentA, QString("alice"));
            QVERIFY(pairs.first().similarity >= 0.8);
            const QList<QByteArray> lines = similarityCsv(pairs).split('\n');
            QCOMPARE(lines.first().trimmed(), QByteArray("exercise,student_a,student_b,similarity,identical"));
            QVERIFY(lines[1].startsWith("transpose,alice,bob,"));
        } else {
            const double sim = jaccard(fingerprints(normalizeSource(a == "starter" ? starter : a)),
                                       fingerprints(normalizeSource(b == "starter" ? starter : b)));
            QVERIFY2(a == "starter" || sim < 0.5, qPrintable(QString::number(sim)));
        }
    }

    void saltChangesInputs_data()
    {
        QTest::addColumn<QString>("salt");
        QTest::addColumn<bool>("changed");
        QTest::newRow("no salt: the seeds as written") << "" << false;
        QTest::newRow("a salt") << "a course secret" << true;
        QTest::newRow("another salt") << "another secret" << true;
    }

    void saltChangesInputs()
    {
        QFETCH(QString, salt);
        QFETCH(bool, changed);
        const Result<Lab> lab = loadLab(kPolicyLab);
        QVERIFY2(lab, qPrintable(lab ? QString() : lab.error().message));
        const Project &p = lab->exercises.first().project;
        const Project s = saltedProject(p, salt);
        QCOMPARE(s.buffers[0].init.seed != p.buffers[0].init.seed, changed);
        QCOMPARE(s.buffers[1].init.seed, p.buffers[1].init.seed); // not random: untouched
        HostBuffers plain;
        HostBuffers salted;
        QVERIFY(plain.materialize(p));
        QVERIFY(salted.materialize(s));
        const HostBuffer *a = plain.find("in");
        const HostBuffer *b = salted.find("in");
        const bool same = std::memcmp(a->memory.data(), b->memory.data(), size_t(a->byteSize())) == 0;
        QCOMPARE(!same, changed);
        // Seed run 1 of the salted project is not seed run 1 of the students' copy either.
        QCOMPARE(projectForSeedRun(s, 1).buffers[0].init.seed != projectForSeedRun(p, 1).buffers[0].init.seed, changed);
        // The same salt gives the same inputs: a grading can be repeated.
        QCOMPARE(saltedProject(p, salt).buffers[0].init.seed, s.buffers[0].init.seed);
    }

    void hiddenChecksNotInStarter()
    {
        const Result<Lab> lab = loadLab(kPolicyLab);
        QVERIFY(lab);
        QCOMPARE(lab->exercises.first().project.checks.size(), 3);
        QVERIFY(isHiddenCheck(lab->exercises.first().project.checks[2]));
        QTemporaryDir out;
        const QString dir = out.filePath("students");
        QStringList written;
        QVERIFY(exportStarter(*lab, dir, &written));
        QCOMPARE(QDir(dir + "/scale").entryList(QDir::Files, QDir::Name), QStringList({"scale.cu", "scale.kpg"}));
        QCOMPARE(readAll(dir + "/scale/scale.cu"), readAll(kPolicyLab + "/scale/starter.cu"));
        const QByteArray kpg = readAll(dir + "/scale/scale.kpg");
        QVERIFY(!kpg.contains("hidden"));
        QVERIFY(!kpg.contains("other inputs"));
        QVERIFY(!kpg.contains("reference"));
        QVERIFY(kpg.contains("the first 100"));
        // The copy is an ordinary project a student can check.
        const Result<Project> p = loadProject(dir + "/scale/scale.kpg");
        QVERIFY2(p, qPrintable(p ? QString() : p.error().message));
        QCOMPARE(p->checks.size(), 2);
        // Never into a folder that holds something.
        const Status again = exportStarter(*lab, dir);
        QVERIFY(!again);
        QVERIFY2(again.error().message.contains("exists and is not an empty folder"),
                 qPrintable(again.error().message));
    }

    void badHiddenValue()
    {
        QTemporaryDir dir;
        QDir().mkpath(dir.filePath("scale"));
        for (const QString &f : QStringList{"starter.cu", "reference.cu"}) {
            QVERIFY(QFile::copy(kPolicyLab + "/scale/" + f, dir.filePath("scale/" + f)));
        }
        QByteArray kpg = readAll(kPolicyLab + "/scale/scale.kpg");
        kpg.replace("\"hidden\": true", "\"hidden\": \"yes\"");
        writeFile(dir.filePath("scale/scale.kpg"), kpg);
        const Result<Lab> lab = loadLab(dir.path());
        QVERIFY(!lab);
        QVERIFY2(lab.error().message.contains("checks[2].hidden: must be true"), qPrintable(lab.error().message));
    }

    void policyErrors_data()
    {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("message");
        QTest::newRow("not JSON") << QByteArray("{") << "grading.json: not JSON at byte";
        QTest::newRow("unknown key") << QByteArray(R"({"point": 3})")
                                     << "grading.json: point: unknown key; allowed here:";
        QTest::newRow("unknown exercise")
            << QByteArray(R"({"exercises": {"sacle": {"points": 3}}})")
            << "grading.json: exercises.sacle: no such exercise in the lab; exercises: scale";
        QTest::newRow("negative points") << QByteArray(R"({"exercises": {"scale": {"points": -1}}})")
                                         << "exercises.scale.points: must be a number from 0 to 1000000, got -1";
        QTest::newRow("speed share above 1") << QByteArray(R"({"default": {"speed": {"share": 1.5}}})")
                                             << "default.speed.share: must be a number from 0 to 1, got 1.5";
        QTest::newRow("partial misspelt")
            << QByteArray(R"({"default": {"partial": "check"}})") << "default.partial: must be \"checks\"";
        QTest::newRow("deadline not a time")
            << QByteArray(R"({"late": {"deadline": "friday"}})") << "late.deadline: must be an ISO 8601 time";
        QTest::newRow("late cap above 100")
            << QByteArray(R"({"late": {"deadline": "2026-03-01T00:00:00Z", "capPercent": 150}})")
            << "late.capPercent: must be a number from 0 to 100, got 150";
        QTest::newRow("ignore with a path") << QByteArray(R"({"ignore": ["a/b"]})") << "ignore: names only";
    }

    void policyErrors()
    {
        QFETCH(QByteArray, json);
        QFETCH(QString, message);
        const Result<LabPolicy> p = parsePolicy(json, "grading.json", {"scale"});
        QVERIFY(!p);
        QVERIFY2(p.error().message.contains(message), qPrintable(p.error().message));
        QCOMPARE(p.error().code, Error::Code::BadInput);
    }

    void points_data()
    {
        QTest::addColumn<QString>("outcome");
        QTest::addColumn<int>("checksPassed");
        QTest::addColumn<double>("speedRatio");
        QTest::addColumn<bool>("guardHit");
        QTest::addColumn<double>("points");
        // scale: 20 points, partial by check, a quarter of them for speed (target 1, floor 0.2).
        QTest::newRow("pass at the target") << "pass" << 3 << 1.0 << false << 20.0;
        QTest::newRow("pass above the target") << "pass" << 3 << 4.0 << false << 20.0;
        QTest::newRow("pass at half the target: linear") << "pass" << 3 << 0.5 << false << 15.0 + 2.5;
        QTest::newRow("pass far below: the floor") << "pass" << 3 << 0.01 << false << 15.0 + 1.0;
        QTest::newRow("not timed: the speed share in full") << "pass" << 3 << qQNaN() << false << 20.0;
        QTest::newRow("two of three checks") << "fail" << 2 << 1.0 << false << 10.0;
        QTest::newRow("a guard hit earns nothing") << "fail" << 2 << 1.0 << true << 0.0;
        QTest::newRow("too slow keeps the correctness points") << "slow" << 3 << 0.25 << false << 15.0 + 1.25;
        QTest::newRow("compile error") << "compile-error" << 0 << qQNaN() << false << 0.0;
        QTest::newRow("timeout") << "timeout" << 0 << qQNaN() << false << 0.0;
    }

    void points()
    {
        QFETCH(QString, outcome);
        QFETCH(int, checksPassed);
        QFETCH(double, speedRatio);
        QFETCH(bool, guardHit);
        QFETCH(double, points);
        const Result<LabPolicy> p = loadPolicy(kPolicyLab, {"scale"});
        QVERIFY2(p, qPrintable(p ? QString() : p.error().message));
        GradeItem i = item("alice", "scale", *outcomeFromKey(outcome));
        i.checksPassed = checksPassed;
        i.checksTotal = 3;
        i.speedRatio = speedRatio;
        if (guardHit) {
            i.wroteOutside = "wrote outside `out` (element 2000, 4 bytes past the end)";
        }
        QCOMPARE(itemPoints(i, p->exercise("scale")), points);
        // Without a policy file: 10 points, all or nothing.
        QCOMPARE(itemPoints(i, LabPolicy{}.exercise("scale")), outcome == "pass" ? 10.0 : 0.0);
    }

    void latePenalty_data()
    {
        QTest::addColumn<QString>("submitted");
        QTest::addColumn<double>("percent");
        QTest::newRow("on time") << "2026-03-01T23:00:00Z" << 0.0;
        QTest::newRow("within the grace") << "2026-03-02T00:08:00Z" << 0.0;
        QTest::newRow("an hour late: a started day") << "2026-03-02T01:00:00Z" << 10.0;
        QTest::newRow("two days late") << "2026-03-03T12:00:00Z" << 20.0;
        QTest::newRow("a week late: the cap") << "2026-03-09T00:00:00Z" << 30.0;
        QTest::newRow("other time zone, on time") << "2026-03-02T00:30:00+01:00" << 0.0;
    }

    void latePenalty()
    {
        QFETCH(QString, submitted);
        QFETCH(double, percent);
        const Result<LabPolicy> p = loadPolicy(kPolicyLab, {"scale"});
        QVERIFY(p);
        const QByteArray manifest = "student,time\nalice," + submitted.toUtf8() + "\n";
        const Result<QHash<QString, QDateTime>> times = parseManifest(manifest, "manifest.csv");
        QVERIFY2(times, qPrintable(times ? QString() : times.error().message));
        QCOMPARE(latePenaltyPercent(times->value("alice"), p->late), percent);
        GradeItem pass = item("alice", "scale", Outcome::Pass);
        const QList<StudentGrade> g = gradebook({"alice"}, {"scale"}, {pass}, *p, *times);
        QCOMPARE(g.first().raw, 40.0); // 20 points, weight 2
        QCOMPARE(g.first().max, 40.0);
        QCOMPARE(g.first().total, 40.0 * (1 - percent / 100));
    }

    void manifestErrors_data()
    {
        QTest::addColumn<QByteArray>("csv");
        QTest::addColumn<QString>("message");
        QTest::newRow("no header") << QByteArray("alice,2026-03-01T00:00:00Z\n")
                                   << "manifest.csv:1: the first line must name the columns 'student' and 'time'";
        QTest::newRow("bad time") << QByteArray("student,time\nalice,yesterday\n")
                                  << "manifest.csv:2: time 'yesterday' is not ISO 8601";
        QTest::newRow("empty") << QByteArray("") << "manifest.csv:1: empty";
    }

    void manifestErrors()
    {
        QFETCH(QByteArray, csv);
        QFETCH(QString, message);
        const Result<QHash<QString, QDateTime>> m = parseManifest(csv, "manifest.csv");
        QVERIFY(!m);
        QVERIFY2(m.error().message.contains(message), qPrintable(m.error().message));
    }

    void timeLimit_data()
    {
        QTest::addColumn<double>("referenceMs");
        QTest::addColumn<double>("seconds");
        QTest::newRow("a microsecond kernel: the minimum") << 0.004 << 1.0;
        QTest::newRow("a 400 ms kernel: five times") << 400.0 << 2.0;
        QTest::newRow("a slow kernel: the cap") << 5000.0 << 3.0;
        QTest::newRow("unknown: the cap") << qQNaN() << 3.0;
    }

    void timeLimit()
    {
        QFETCH(double, referenceMs);
        QFETCH(double, seconds);
        const Result<LabPolicy> p = loadPolicy(kPolicyLab, {"scale"});
        QVERIFY(p);
        QCOMPARE(timeLimitSeconds(p->timeLimit, referenceMs, 5), seconds);
    }

    void exportShapes()
    {
        const Result<LabPolicy> p = loadPolicy(kPolicyLab, {"scale"});
        QVERIFY(p);
        GradeItem a = item("alice", "scale", Outcome::Fail);
        a.checksPassed = 2;
        a.checksTotal = 3;
        a.failedCheck = "the first 100";
        a.firstMismatch = "out[3] (x=3): got 1, expected 2";
        a.detail = "check 'the first 100' failed";
        a.speedRatio = 1.5;
        GradeItem b = item("bob<script>", "scale", Outcome::CompileError);
        b.compileErrors = {"scale.cu:4:12: expected a \";\"", "scale.cu:9:1: `x` is undefined"};
        GradeItem c = item("carol", "scale", Outcome::Fail);
        c.failedCheck = "as the reference, other inputs";
        c.failedCheckHidden = true;
        c.firstMismatch = "out[7] (x=7): got 0, expected 21";
        c.checksPassed = 2;
        c.checksTotal = 3;
        const QList<GradeItem> items{a, b, c};
        const QStringList students{"alice", "bob<script>", "carol"};
        const QList<StudentGrade> grades = gradebook(students, {"scale"}, items, *p, {});

        // Gradebook: a header and exactly one row per student.
        const QList<QByteArray> rows = gradebookCsv({"scale"}, grades).trimmed().split('\n');
        QCOMPARE(rows.size(), 4);
        QCOMPARE(rows[0].trimmed(), QByteArray("student,total,max,late_penalty_percent,scale"));
        QCOMPARE(rows[1].trimmed(), QByteArray("alice,20,40,0,20")); // 2 of 3 checks of 15, weight 2 (no speed credit)
        QCOMPARE(rows[2].trimmed(), QByteArray("bob<script>,0,40,0,0"));

        // Gradescope: the documented keys and types.
        for (const StudentGrade &g : grades) {
            Feedback f;
            f.student = g.student;
            f.lab = "lab-policy";
            f.grade = g;
            f.policy = *p;
            for (const GradeItem &i : items) {
                if (i.student == g.student) {
                    f.items << i;
                }
            }
            const QJsonObject r = gradescopeResults(f, 3.2);
            QVERIFY(r.value("score").isDouble());
            QCOMPARE(r.value("score").toDouble(), g.total);
            QCOMPARE(r.value("execution_time").toInt(), 4);
            const QJsonArray tests = r.value("tests").toArray();
            QCOMPARE(tests.size(), 1);
            const QJsonObject t = tests.first().toObject();
            for (const char *key : {"score", "max_score"}) {
                QVERIFY2(t.value(key).isDouble(), key);
            }
            for (const char *key : {"name", "output", "visibility", "status"}) {
                QVERIFY2(t.value(key).isString(), key);
            }
            QVERIFY(QStringList({"hidden", "after_due_date", "after_published", "visible"})
                        .contains(t.value("visibility").toString()));
            QCOMPARE(t.value("max_score").toDouble(), 40.0);
            const QString md = feedbackMarkdown(f);
            const QString html = feedbackHtml(f);
            if (g.student == "alice") {
                QVERIFY2(md.contains("First mismatch: out\\[3\\] \\(x=3\\): got 1, expected 2"), qPrintable(md));
                QVERIFY(md.contains("Speed: 1\\.50x the reference"));
                QVERIFY(t.value("output").toString().contains("First mismatch: out[3] (x=3)"));
            } else if (g.student == "carol") {
                // A hidden check's name and data are not shown before grades are published.
                QCOMPARE(t.value("visibility").toString(), QString("after_published"));
                QVERIFY(!t.value("output").toString().contains("out[7]"));
                QVERIFY(!md.contains("out\\[7\\]") && !md.contains("other inputs"));
                QVERIFY(md.contains("Failed a hidden test"));
            } else {
                QVERIFY2(md.contains("scale.cu:4:12: expected a \";\""), qPrintable(md));
                QVERIFY(!html.contains("<script>"));
                QVERIFY(html.contains("bob&lt;script&gt;"));
                QVERIFY(html.contains("scale.cu:4:12: expected a &quot;;&quot;"));
            }
        }

        // Autolab: one JSON line {"scores": {...}}.
        const QJsonDocument line = QJsonDocument::fromJson(autolabScoreLine({"scale"}, grades.first()));
        QVERIFY(line.isObject());
        QCOMPARE(line.object().value("scores").toObject().value("scale").toDouble(), 20.0);
        QVERIFY(!autolabScoreLine({"scale"}, grades.first()).contains('\n'));
    }

    void suspiciousSpeed_data()
    {
        QTest::addColumn<double>("ratio");
        QTest::addColumn<double>("bound");
        QTest::addColumn<QString>("flag");
        QTest::newRow("as fast as the reference") << 1.0 << 10.0 << "";
        QTest::newRow("at the bound") << 10.0 << 10.0 << "";
        QTest::newRow("far above the bound")
            << 25.3 << 10.0
            << "25.3x the reference's speed, above the 10x bound: check it for a cached answer or a timing trick";
        QTest::newRow("bound off") << 1000.0 << 0.0 << "";
        QTest::newRow("not timed") << qQNaN() << 10.0 << "";
    }

    void suspiciousSpeed()
    {
        QFETCH(double, ratio);
        QFETCH(double, bound);
        QFETCH(QString, flag);
        GradeItem i = item("alice", "scale", Outcome::Pass);
        i.speedRatio = ratio;
        flagSuspiciousSpeed(&i, bound);
        QCOMPARE(i.flags.value(0), flag);
        QCOMPARE(i.outcome, Outcome::Pass); // a look, not a grade
        if (!flag.isEmpty()) {
            QVERIFY(tableText({"scale"}, {i}).contains("flagged: " + flag));
        }
    }

    void sentinelRequest()
    {
        // The anti-gaming field travels to the worker, and an ordinary run's request is what it was.
        RunRequest r;
        QVERIFY(!r.toVariant().contains("sentinelBuffers"));
        r.sentinelBuffers = {1, 3};
        const RunRequest back = RunRequest::fromVariant(r.toVariant());
        QCOMPARE(back.sentinelBuffers, QList<int>({1, 3}));
        QCOMPARE(RunRequest::fromVariant(RunRequest{}.toVariant()).sentinelBuffers, QList<int>{});
    }

    void sentinelBeforeEveryLaunch_data()
    {
        // kpg grade fills a checked output that starts empty with 0xFF before
        // every launch of the first step that takes it (run/sentinel.h).
        QTest::addColumn<QString>("kpg"); // a path, or a project's JSON (written beside kSentinelSource)
        QTest::addColumn<QStringList>("plan");
        QTest::newRow("lab scale: out before its one step") << kLab + "/scale/scale.kpg" << QStringList{"0:out"};
        QTest::newRow("lab vector_add: c") << kLab + "/vector_add/vector_add.kpg" << QStringList{"0:c"};
        QTest::newRow("lab saxpy: y has contents, no sentinel") << kLab + "/saxpy/saxpy.kpg" << QStringList{};
        QTest::newRow("policy lab scale, three checks of one buffer")
            << kPolicyLab + "/scale/scale.kpg" << QStringList{"0:out"};
        const QString head = R"({"format": "kernel-playground-project", "version": 1, "source": "k.cu",
            "scalars": [{"name": "n", "type": "int32", "value": 64}],
            "buffers": [{"name": "in", "dtype": "int32", "shape": [64], "init": {"kind": "random", "min": 0, "max": 9, "seed": 1}},
                        {"name": "part", "dtype": "int32", "shape": [64]},
                        {"name": "out", "dtype": "int32", "shape": [64], "init": {"kind": %1}}],
            "launches": [{"kernel": "first", "grid": 1, "block": 64, "args": ["in", "part", "n"]},
                         {"kernel": "second", "grid": 1, "block": 64, "args": ["part", "out", "n"]},
                         {"kernel": "third", "grid": 1, "block": 64, "args": ["out", "n"]}],
            %2
            "checks": [{"name": "out", "buffer": "out", "expected": "in"}%3]})";
        QTest::newRow("two passes: out before the step that writes it, not before the one that rewrites it")
            << head.arg(R"("zeros")", "", "") << QStringList{"1:out"};
        QTest::newRow("uninitialized output") << head.arg(R"("uninitialized")", "", "") << QStringList{"1:out"};
        QTest::newRow("checked intermediate too")
            << head.arg(R"("zeros")", "", R"(, {"name": "part", "buffer": "part", "expected": "in"})")
            << QStringList{"0:part", "1:out"};
        QTest::newRow("an output with contents (a kernel may add into it)")
            << head.arg(R"("constant", "value": 1)", "", "") << QStringList{};
        QTest::newRow("repeated: before each repetition's launch")
            << head.arg(R"("zeros")", R"("repeat": {"count": 3, "swap": []},)", "") << QStringList{"1:out"};
        QTest::newRow("swapped buffers move between repetitions: none")
            << head.arg(R"("zeros")", R"("repeat": {"count": 2, "swap": [["part", "out"]]},)", "") << QStringList{};
    }

    void sentinelBeforeEveryLaunch()
    {
        QFETCH(QString, kpg);
        QFETCH(QStringList, plan);
        QTemporaryDir dir;
        QString path = kpg;
        if (kpg.startsWith('{')) {
            path = dir.filePath("p.kpg");
            writeFile(path, kpg.toUtf8());
            writeFile(
                dir.filePath("k.cu"),
                "__global__ void first(const int *in, int *part, int n) { part[threadIdx.x] = in[threadIdx.x]; }\n"
                "__global__ void second(const int *part, int *out, int n) { out[threadIdx.x] = part[threadIdx.x]; }\n"
                "__global__ void third(int *out, int n) { out[threadIdx.x] += 0; }\n");
        }
        QCOMPARE(sentinelPlan(path), plan);
    }

    void sentinelBeforeStepsOfRequests_data()
    {
        // The worker's side, on requests as they travel: streams and bad indices.
        QTest::addColumn<RunRequest>("request");
        QTest::addColumn<QList<QList<int>>>("before");
        RunRequest two;
        two.buffers.resize(2);
        two.buffers[0].name = "a";
        two.buffers[1].name = "b";
        RunStep k;
        k.args.resize(2);
        k.args[0].buffer = 0;
        k.args[1].buffer = 1;
        two.steps = {k, k};
        two.sentinelBuffers = {1};
        QTest::newRow("first of two steps taking it") << two << QList<QList<int>>{{1}, {}};
        RunRequest none = two;
        none.sentinelBuffers = {};
        QTest::newRow("no sentinel buffers") << none << QList<QList<int>>{{}, {}};
        RunRequest bad = two;
        bad.sentinelBuffers = {-1, 7, 1, 1};
        QTest::newRow("indices out of range ignored, repeats once") << bad << QList<QList<int>>{{1}, {}};
        RunRequest streamed = two;
        streamed.streams.resize(2);
        streamed.steps[1].stream = 1;
        QTest::newRow("streams: none") << streamed << QList<QList<int>>{{}, {}};
        RunRequest copy = two;
        RunStep memset;
        memset.kind = RunStep::Kind::Memset;
        memset.buffer = 1;
        copy.steps.prepend(memset);
        QTest::newRow("a memset step runs the steps as streams: none") << copy << QList<QList<int>>{{}, {}, {}};
    }

    void sentinelBeforeStepsOfRequests()
    {
        QFETCH(RunRequest, request);
        QFETCH(QList<QList<int>>, before);
        QCOMPARE(sentinelBeforeSteps(request), before);
    }

    void controlCharacters_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("shown");
        QTest::newRow("terminal escape") << QString("eve\x1b[2J") << "eve?[2J";
        QTest::newRow("bell and newline") << QString("eve\a\nx") << "eve??x";
        QTest::newRow("right-to-left override") << QString("eve") + QChar(0x202E) + "cod.exe"
                                                << "eve?cod.exe";
    }

    void controlCharacters()
    {
        QFETCH(QString, name);
        QFETCH(QString, shown);
        QCOMPARE(printableText(name), shown);
        GradeItem i = item(name, "scale", Outcome::Fail);
        i.detail = name;
        i.flags << name;
        const QString table = tableText({"scale"}, {i});
        QVERIFY(table.contains(shown));
        QVERIFY(!table.contains(QChar(0x1b)) && !table.contains(QChar(0x202E)));
        const StudentGrade g = gradebook({name}, {"scale"}, {i}, LabPolicy{}, {}).first();
        QVERIFY(gradebookCsv({"scale"}, {g}).contains(shown.toUtf8()));
        Feedback f;
        f.student = name;
        f.grade = g;
        f.items << i;
        for (const QString &text : {feedbackMarkdown(f), feedbackHtml(f)}) {
            QVERIFY(!text.contains(QChar(0x1b)) && !text.contains(QChar(0x202E)) && !text.contains(QChar('\a')));
        }
    }
};

QTEST_GUILESS_MAIN(TestGrade)
#include "tst_grade.moc"

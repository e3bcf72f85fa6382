// On a machine with an NVIDIA GPU: every preset passes its own checks, and
// every deliberately broken variant in presets/<name>/broken/ runs without a
// fault and fails the check its first line names, first at the index it
// names (`// kpg-expect: fail "CHECK" first INDEX|any`).
//
// The checks are evaluated here by a small evaluator of the format in
// docs/kpg-project.md (expected expressions, reference buffers, seeds,
// absolute and relative tolerances, NaN), enough for what the presets use; a
// check with a feature it does not know (npy, region, ulp) fails the test
// rather than pass unevaluated.

#include "buffers/dtype.h"
#include "client/engineclient.h"
#include "compile/compiler.h"
#include "core/expression.h"
#include "cuda/deviceinfo.h"
#include "project/projectio.h"
#include "run/projectcompile.h"
#include "run/runner.h"
#include "testutil.h"
#include "worker/protocol.h"

#include <QDir>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QtTest>

#include <cmath>
#include <functional>
#include <memory>

using namespace Kp;

namespace {

QString presetsDir()
{
    return QStringLiteral(KPG_SOURCE_DIR "/presets");
}

QStringList presetNames()
{
    return QDir(presetsDir()).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
}

QString kpgPath(const QString &name)
{
    return presetsDir() + QLatin1Char('/') + name + QLatin1Char('/') + name + QStringLiteral(".kpg");
}

QJsonObject readJson(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        return {};
    }
    return QJsonDocument::fromJson(f.readAll()).object();
}

bool isFloatComponent(DType c)
{
    return c == DType::Float16 || c == DType::BFloat16 || c == DType::Float32 || c == DType::Float64;
}

// Run k of a check with "seeds": every random buffer's seed + k * 1000003.
QJsonObject reseeded(QJsonObject top, int k)
{
    if (k == 0) {
        return top;
    }
    QJsonArray buffers = top.value("buffers").toArray();
    for (qsizetype b = 0; b < buffers.size(); ++b) {
        QJsonObject buf = buffers[b].toObject();
        QJsonObject init = buf.value("init").toObject();
        if (init.value("kind").toString() == QLatin1String("random")) {
            init.insert("seed", init.value("seed").toDouble(1) + double(k) * 1000003.0);
            buf.insert("init", init);
            buffers[b] = buf;
        }
    }
    top.insert("buffers", buffers);
    return top;
}

struct CheckOutcome
{
    bool passed = true;
    qint64 firstIndex = -1; ///< flat element index of the first mismatch, in the first failing seed run
    int failedRun = -1;
    qint64 mismatches = 0;
    double gotAtFirst = 0;
    double expectedAtFirst = 0;
};

// One run's buffers: the initial contents and the contents after the run.
struct RunBuffers
{
    Project project;
    HostBuffers initial;
    HostBuffers after;
    double wallMs = 0;
};

} // namespace

class TestGpuPresets : public QObject
{
    Q_OBJECT

private:
    std::unique_ptr<EngineClient> m_client;
    std::unique_ptr<Runner> m_runner;
    std::unique_ptr<Compiler> m_compiler;
    DeviceInfo m_device;
    QHash<QString, std::shared_ptr<RunBuffers>> m_referenceRuns; // "path#k"
    QString m_referencePath;

    // Parses top (relative files against dir), puts sourceText in place of
    // the source when it is not empty, compiles, runs once without timing.
    std::shared_ptr<RunBuffers> runProject(const QJsonObject &top, const QString &dir, const QString &sourceText,
                                           QString *why)
    {
        auto r = std::make_shared<RunBuffers>();
        const Result<Project> p = parseProject(QJsonDocument(top), dir);
        if (!p) {
            *why = p.error().toString();
            return {};
        }
        r->project = *p;
        r->project.path = dir + QStringLiteral("/run.kpg");
        r->project.timing.enabled = false;
        if (!sourceText.isEmpty()) {
            r->project.sourceText = sourceText;
        }
        const auto c = m_compiler->compile(compileRequestFor(r->project, m_device.ccMajor, m_device.ccMinor));
        if (!c || !c->ok) {
            *why = c ? c->log : c.error().toString();
            return {};
        }
        if (Status s = r->initial.materialize(r->project); !s) {
            *why = s.error().toString();
            return {};
        }
        if (Status s = r->after.materialize(r->project); !s) {
            *why = s.error().toString();
            return {};
        }
        const auto prepared = prepareRun(r->project, *c, r->after, 0);
        if (!prepared) {
            *why = prepared.error().toString();
            return {};
        }
        QElapsedTimer t;
        t.start();
        const RunResult res = m_runner->runSync(*prepared, &r->after);
        r->wallMs = double(t.nsecsElapsed()) / 1e6;
        if (res.error) {
            *why = QStringLiteral("the run failed (step %1): %2").arg(res.failedStep).arg(res.error->toString());
            return {};
        }
        return r;
    }

    // The trusted reference run of a preset for seed run k (cached: the
    // reference does not change with the source under test).
    std::shared_ptr<RunBuffers> referenceRun(const QString &path, int k, QString *why)
    {
        // Rows come preset by preset: keep only the current preset's runs.
        if (!m_referenceRuns.isEmpty() && m_referencePath != path) {
            m_referenceRuns.clear();
        }
        m_referencePath = path;
        const QString key = path + QLatin1Char('#') + QString::number(k);
        if (auto it = m_referenceRuns.find(key); it != m_referenceRuns.end()) {
            return *it;
        }
        QJsonObject top = readJson(path);
        const QJsonObject ref = top.value("reference").toObject();
        if (ref.contains("source")) {
            top.insert("source", ref.value("source"));
        }
        if (ref.contains("launches")) {
            top.insert("launches", ref.value("launches"));
        }
        top.remove("reference");
        top.remove("checks");
        auto r = runProject(reseeded(top, k), QFileInfo(path).absolutePath(), {}, why);
        if (r) {
            m_referenceRuns.insert(key, r);
        }
        return r;
    }

    // Runs the preset (with sourceText in place of its kernel when given) as
    // many times as its checks ask and evaluates every check.
    bool evaluate(const QString &path, const QString &sourceText, QList<QPair<QString, CheckOutcome>> *outcomes,
                  QString *why, double *wallMs = nullptr)
    {
        const QJsonObject top = readJson(path);
        const QString dir = QFileInfo(path).absolutePath();
        const QJsonArray checks = top.value("checks").toArray();
        int runs = 1;
        for (const QJsonValue &c : checks) {
            runs = std::max(runs, c.toObject().value("seeds").toInt(1));
        }
        QList<std::shared_ptr<RunBuffers>> own;
        for (int k = 0; k < runs; ++k) {
            QJsonObject t = reseeded(top, k);
            t.remove("reference");
            t.remove("checks");
            auto r = runProject(t, dir, sourceText, why);
            if (!r) {
                return false;
            }
            if (wallMs && k == 0) {
                *wallMs = r->wallMs;
            }
            own << r;
        }
        for (const QJsonValue &v : checks) {
            const QJsonObject c = v.toObject();
            for (const QString &k : c.keys()) {
                if (k == "npy" || k == "region" || k == "nan") {
                    *why = QStringLiteral("check key '%1' is not evaluated by this test").arg(k);
                    return false;
                }
            }
            CheckOutcome o;
            const int seeds = c.value("seeds").toInt(1);
            for (int k = 0; k < seeds && o.passed; ++k) {
                if (!evaluateOnce(path, c, *own[k], k, &o, why)) {
                    return false;
                }
                if (!o.passed) {
                    o.failedRun = k;
                }
            }
            outcomes->append({c.value("name").toString(), o});
        }
        return true;
    }

    bool evaluateOnce(const QString &path, const QJsonObject &c, const RunBuffers &run, int k, CheckOutcome *o,
                      QString *why)
    {
        const HostBuffer *got = run.after.find(c.value("buffer").toString());
        if (!got) {
            *why = QStringLiteral("no buffer ") + c.value("buffer").toString();
            return false;
        }
        const DTypeInfo &info = dtypeInfo(got->spec.dtype);
        const bool isFloat = isFloatComponent(info.component);
        double abs = 0, rel = 0;
        if (info.component == DType::Float32) {
            abs = 1e-6;
            rel = 1e-5;
        } else if (info.component == DType::Float64) {
            abs = 1e-12;
            rel = 1e-12;
        } else if (isFloat) {
            abs = 1e-3;
            rel = 1e-2;
        }
        if (c.contains("tolerance")) {
            const QJsonObject t = c.value("tolerance").toObject();
            if (t.contains("ulp")) {
                *why = QStringLiteral("ulp tolerances are not evaluated by this test");
                return false;
            }
            abs = t.value("abs").toDouble(0);
            rel = t.value("rel").toDouble(0);
        }
        const qint64 comps = info.components;
        const qint64 count = got->elementCount() * comps;
        const auto load = [](const HostBuffer *b, qint64 q) {
            const DTypeInfo &bi = dtypeInfo(b->spec.dtype);
            return loadComponent(bi.component, static_cast<const char *>(b->memory.data()) + q * bi.componentBytes);
        };
        std::function<double(qint64)> expected;
        std::shared_ptr<Expression> e;
        if (c.contains("reference")) {
            const auto ref = referenceRun(path, k, why);
            if (!ref) {
                *why = QStringLiteral("reference: ") + *why;
                return false;
            }
            const HostBuffer *rb = ref->after.find(c.value("reference").toString());
            if (!rb || rb->byteSize() != got->byteSize()) {
                *why = QStringLiteral("the reference buffer is missing or of another size");
                return false;
            }
            expected = [rb, load](qint64 q) { return load(rb, q); };
        } else {
            e = std::make_shared<Expression>();
            for (const ScalarSpec &s : run.project.scalars) {
                e->set(s.name, s.value);
            }
            double *vi = e->variable("i");
            double *vx = e->variable("x");
            double *vy = e->variable("y");
            double *vz = e->variable("z");
            QList<QPair<double *, const HostBuffer *>> same;
            for (const auto &b : run.initial.all()) {
                if (b->elementCount() == got->elementCount() && dtypeInfo(b->spec.dtype).components == 1) {
                    same << qMakePair(e->variable(b->spec.name), b.get());
                }
            }
            if (Status s = e->parse(c.value("expected").toString(), QStringLiteral("expected")); !s) {
                *why = s.error().toString();
                return false;
            }
            const QList<qint64> &sh = got->shape;
            const qint64 nx = sh.last();
            const qint64 ny = sh.size() >= 2 ? sh[sh.size() - 2] : 1;
            expected = [=](qint64 q) {
                const qint64 i = q / comps;
                *vi = double(i);
                *vx = double(i % nx);
                *vy = double((i / nx) % ny);
                *vz = double(i / (nx * ny));
                for (const auto &[var, buf] : same) {
                    *var = load(buf, i);
                }
                const Result<double> r = e->evaluate();
                return r ? *r : std::nan("");
            };
        }
        for (qint64 q = 0; q < count; ++q) {
            const double g = load(got, q);
            const double x = expected(q);
            bool ok = false;
            if (!isFloat) {
                ok = g == x;
            } else if (std::isnan(g) || std::isnan(x)) {
                ok = false;
            } else if (std::isinf(g) || std::isinf(x)) {
                ok = g == x;
            } else {
                ok = std::fabs(g - x) <= abs + rel * std::fabs(x);
            }
            if (!ok) {
                if (o->passed) {
                    o->passed = false;
                    o->firstIndex = q / comps;
                    o->gotAtFirst = g;
                    o->expectedAtFirst = x;
                }
                ++o->mismatches;
            }
        }
        return true;
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_client = std::make_unique<EngineClient>();
        const Reply r = m_client->requestSync(Protocol::Type::ListDevices);
        if (!r) {
            if (r.error().code == Error::Code::NoDriver || r.error().code == Error::Code::NoDevice) {
                QSKIP(qPrintable(QStringLiteral("no GPU: %1").arg(r.error().message)));
            }
            QFAIL(qPrintable(r.error().toString()));
        }
        m_device = DeviceList::fromVariant(r.value()).devices.first();
        m_runner = std::make_unique<Runner>(m_client.get());
        m_compiler = std::make_unique<Compiler>(Compiler::Config{QStringLiteral("-"), 0});
    }

    void presetPassesItsChecks_data()
    {
        QTest::addColumn<QString>("path");
        for (const QString &name : presetNames()) {
            QTest::newRow(qPrintable(name)) << kpgPath(name);
        }
    }

    void presetPassesItsChecks()
    {
        QFETCH(QString, path);
        QList<QPair<QString, CheckOutcome>> outcomes;
        QString why;
        double wallMs = 0;
        QVERIFY2(evaluate(path, {}, &outcomes, &why, &wallMs), qPrintable(why));
        QVERIFY(!outcomes.isEmpty());
        for (const auto &[name, o] : outcomes) {
            QVERIFY2(o.passed, qPrintable(QStringLiteral("%1: %2 mismatches in seed run %3, first at %4: got %5, "
                                                         "expected %6")
                                              .arg(name)
                                              .arg(o.mismatches)
                                              .arg(o.failedRun)
                                              .arg(o.firstIndex)
                                              .arg(o.gotAtFirst, 0, 'g', 9)
                                              .arg(o.expectedAtFirst, 0, 'g', 9)));
        }
        // A preset is a quick demonstration: one untimed run (upload, all
        // launches and repeats, download) takes well under a second; the
        // limit leaves room for the first run's module load.
        qInfo("%s: one run %.1f ms", qPrintable(QFileInfo(path).baseName()), wallMs);
        QVERIFY2(wallMs < 2000, qPrintable(QStringLiteral("one run took %1 ms").arg(wallMs)));
    }

    void brokenVariantFailsAsExpected_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("variant");
        for (const QString &name : presetNames()) {
            const QDir broken(presetsDir() + QLatin1Char('/') + name + QStringLiteral("/broken"));
            for (const QString &f : broken.entryList({QStringLiteral("*.cu")}, QDir::Files)) {
                QTest::newRow(qPrintable(name + QLatin1Char('/') + f)) << kpgPath(name) << broken.filePath(f);
            }
        }
    }

    void brokenVariantFailsAsExpected()
    {
        QFETCH(QString, path);
        QFETCH(QString, variant);
        QFile f(variant);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(f.readAll());
        static const QRegularExpression expect(QStringLiteral("^// kpg-expect: fail \"([^\"]+)\" first (\\d+|any)\n"));
        const QRegularExpressionMatch m = expect.match(text);
        QVERIFY2(m.hasMatch(), "the first line states the expected failure");
        QList<QPair<QString, CheckOutcome>> outcomes;
        QString why;
        QVERIFY2(evaluate(path, text, &outcomes, &why), qPrintable(why));
        bool found = false;
        for (const auto &[name, o] : outcomes) {
            if (name != m.captured(1)) {
                continue;
            }
            found = true;
            QVERIFY2(!o.passed, qPrintable(name + " passed"));
            qInfo("%s: %lld mismatches in seed run %d, first at %lld: got %.9g, expected %.9g", qPrintable(name),
                  o.mismatches, o.failedRun, o.firstIndex, o.gotAtFirst, o.expectedAtFirst);
            if (m.captured(2) != QLatin1String("any")) {
                QCOMPARE(o.firstIndex, m.captured(2).toLongLong());
            }
        }
        QVERIFY2(found, qPrintable("no check named " + m.captured(1)));
    }
};

QTEST_GUILESS_MAIN(TestGpuPresets)
#include "tst_gpu_presets.moc"

// kpg compare: the verdict on two timed runs (kpg run --json), judged from
// their sample distributions, not from two medians (docs/compare.md).

#include "cliutil.h"
#include "compare/runfile.h"
#include "compare/verdict.h"
#include "core/printable.h"
#include "core/safefile.h"
#include "projectcli.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <optional>

namespace Kp::Cli {

namespace {

Result<RunFile> readRunFile(const QString &path)
{
    const Result<QByteArray> bytes = readRegularFile(path, kMaxRunFileBytes, QStringLiteral("the run result"));
    if (!bytes) {
        return bytes.error();
    }
    return parseRunFile(*bytes, path);
}

QString timeText(double ms)
{
    return ms < 1 ? QStringLiteral("%1 us").arg(ms * 1000, 0, 'f', 3) : QStringLiteral("%1 ms").arg(ms, 0, 'f', 4);
}

QJsonObject summaryJson(const RunFile &f, const SampleSummary &s)
{
    return QJsonObject{{QStringLiteral("file"), f.path},
                       {QStringLiteral("title"), f.title},
                       {QStringLiteral("device"), f.device},
                       {QStringLiteral("mode"), f.mode},
                       {QStringLiteral("count"), s.count},
                       {QStringLiteral("minMs"), s.min},
                       {QStringLiteral("q1Ms"), s.q1},
                       {QStringLiteral("medianMs"), s.median},
                       {QStringLiteral("q3Ms"), s.q3},
                       {QStringLiteral("maxMs"), s.max},
                       {QStringLiteral("kernels"), QJsonArray::fromStringList(f.kernels)}};
}

} // namespace

int compareCommand(const QStringList &args)
{
    QStringList files;
    QString json;
    CompareRule rule;
    std::optional<QString> expect;
    for (qsizetype i = 0; i < args.size(); ++i) {
        const QString &s = args[i];
        if (s == QLatin1String("--threshold") || s == QLatin1String("--expect") || s == QLatin1String("--json")) {
            if (i + 1 >= args.size()) {
                return usageError(QStringLiteral("compare: %1 needs a value").arg(s));
            }
            const QString v = args[++i];
            if (s == QLatin1String("--json")) {
                if (const std::optional<int> bad = checkOutputOption(QStringLiteral("compare"), s, v)) {
                    return *bad;
                }
                json = v;
            } else if (s == QLatin1String("--expect")) {
                static const QStringList allowed{"same", "faster", "slower", "not-slower", "not-faster"};
                if (!allowed.contains(v)) {
                    return usageError(QStringLiteral("compare: --expect takes one of %1, not '%2'")
                                          .arg(allowed.join(QStringLiteral(", ")), v));
                }
                expect = v;
            } else {
                bool ok = false;
                const double pct = QString(v).remove(QLatin1Char('%')).toDouble(&ok);
                if (!ok || !(pct >= 0) || pct >= 100) {
                    return usageError(
                        QStringLiteral("compare: --threshold takes a percentage from 0 to under 100, not '%1'").arg(v));
                }
                rule.minRelativeDifference = pct / 100;
            }
        } else if (s.startsWith(QLatin1Char('-')) && s != QLatin1String("-")) {
            return usageError(QStringLiteral("compare: unknown option '%1'").arg(s));
        } else {
            files << s;
        }
    }
    if (files.contains(QStringLiteral("-"))) {
        return usageError(QStringLiteral("compare: '-' would be standard input, which kpg compare does not read; give "
                                         "the files that 'kpg run --json FILE' wrote"));
    }
    if (files.size() != 2) {
        return usageError(QStringLiteral("compare: give two run results, the baseline and the candidate (kpg compare "
                                         "A.json B.json); %1 given")
                              .arg(files.size()));
    }
    const Result<RunFile> a = readRunFile(files[0]);
    if (!a) {
        err() << "kpg: " << printable(a.error().message) << "\n";
        return Exit::forError(a.error());
    }
    const Result<RunFile> b = readRunFile(files[1]);
    if (!b) {
        err() << "kpg: " << printable(b.error().message) << "\n";
        return Exit::forError(b.error());
    }
    const Comparison c = compareSamples(a->samples, b->samples, rule);
    // With --json -, the JSON owns stdout and the summary goes to stderr.
    QTextStream &o = json == QLatin1String("-") ? err() : out();

    // Titles, devices and kernel names come from the files: printed with control characters replaced.
    const auto describe = [&o](const char *label, const RunFile &f, const SampleSummary &s) {
        o << label << ": " << printable(f.path);
        if (!f.title.isEmpty()) {
            o << " (" << printable(f.title) << ")";
        }
        o << " on " << (f.device.isEmpty() ? QStringLiteral("?") : printable(f.device)) << ", "
          << printable(f.kernels.join(", ")) << ": " << s.count << " " << f.mode << " samples, median "
          << timeText(s.median) << ", [min, q3] [" << timeText(s.min) << ", " << timeText(s.q3) << "]\n";
    };
    describe("A (baseline) ", *a, c.a);
    describe("B (candidate)", *b, c.b);
    if (a->mode != b->mode) {
        err() << "kpg: warning: A was timed " << printable(a->mode) << " and B " << printable(b->mode)
              << "; the comparison mixes two timing modes\n";
    }
    if (a->device != b->device) {
        err() << "kpg: warning: A ran on " << printable(a->device) << " and B on " << printable(b->device) << "\n";
    }
    o << "verdict: " << verdictName(c.verdict).toUpper();
    if (c.verdict == Verdict::Faster || c.verdict == Verdict::Slower) {
        o << " (B is " << verdictName(c.verdict) << " than A: " << QString::number(c.ratio, 'f', 3) << "x A's speed)";
    }
    o << "\n  rule (times in ms): " << printable(c.reason) << "\n";
    o.flush();
    err().flush();

    int code = Exit::Ok;
    if (expect) {
        const bool met = *expect == QLatin1String("not-slower")   ? c.verdict != Verdict::Slower
                         : *expect == QLatin1String("not-faster") ? c.verdict != Verdict::Faster
                                                                  : verdictName(c.verdict) == *expect;
        if (!met) {
            err() << "kpg: expected " << *expect << ", the verdict is " << verdictName(c.verdict) << "\n";
            code = Exit::CheckFailed;
        }
    }
    if (!json.isEmpty()) {
        const QJsonObject doc{{QStringLiteral("verdict"), verdictName(c.verdict)},
                              {QStringLiteral("relativeDifference"), c.relativeDifference},
                              {QStringLiteral("gap"), c.gap},
                              {QStringLiteral("ratio"), c.ratio},
                              {QStringLiteral("threshold"), c.rule.minRelativeDifference},
                              {QStringLiteral("minSamples"), c.rule.minSamples},
                              {QStringLiteral("reason"), c.reason},
                              {QStringLiteral("a"), summaryJson(*a, c.a)},
                              {QStringLiteral("b"), summaryJson(*b, c.b)}};
        if (!writeText(json, QJsonDocument(doc).toJson(QJsonDocument::Indented), QStringLiteral("the comparison"))) {
            code = code ? code : Exit::CannotWrite;
        }
    }
    return code;
}

} // namespace Kp::Cli

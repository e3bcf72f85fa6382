#include "memorycheck.h"

#include <QFileInfo>
#include <QHash>
#include <QMap>
#include <QPointer>
#include <QThread>

#include <memory>

namespace Kp {

QString sanitizerKindWords(Sanitizer::Finding::Kind kind)
{
    using K = Sanitizer::Finding::Kind;
    switch (kind) {
    case K::InvalidAccess: return QObject::tr("invalid accesses");
    case K::Race: return QObject::tr("races");
    case K::Hazard: return QObject::tr("hazards");
    case K::Uninitialized: return QObject::tr("uninitialised reads");
    case K::Sync: return QObject::tr("barrier errors");
    case K::Api: return QObject::tr("failed CUDA calls");
    case K::Other: break;
    }
    return QObject::tr("other findings");
}

QString sanitizerKindCount(Sanitizer::Finding::Kind kind, qsizetype n)
{
    using K = Sanitizer::Finding::Kind;
    if (n != 1) {
        return QStringLiteral("%1 %2").arg(n).arg(sanitizerKindWords(kind));
    }
    switch (kind) {
    case K::InvalidAccess: return QObject::tr("1 invalid access");
    case K::Race: return QObject::tr("1 race");
    case K::Hazard: return QObject::tr("1 hazard");
    case K::Uninitialized: return QObject::tr("1 uninitialised read");
    case K::Sync: return QObject::tr("1 barrier error");
    case K::Api: return QObject::tr("1 failed CUDA call");
    case K::Other: break;
    }
    return QObject::tr("1 other finding");
}

QList<Diagnostic> sanitizerDiagnostics(const Sanitizer::Report &report, const QString &fileName)
{
    const QString base = QFileInfo(fileName).fileName();
    struct Group
    {
        const Sanitizer::Finding *first = nullptr;
        int count = 0;
    };
    // (line, kind) -> the first finding there and how many there are; QMap keeps lines in order.
    QMap<std::pair<int, int>, Group> groups;
    // Findings without a source line (failed API calls, a host copy reading
    // uninitialised memory): one warning per distinct message, with a count,
    // not one each (initcheck reports a download in dozens of pieces).
    QMap<QString, int> lineless;
    QStringList linelessOrder;
    for (const Sanitizer::Finding &f : report.findings) {
        if (QFileInfo(f.where.path).fileName() != base || f.where.line <= 0) {
            if (f.kind == Sanitizer::Finding::Kind::Api || f.where.line <= 0) {
                const QString m = f.summary();
                if (!lineless.contains(m)) {
                    linelessOrder << m;
                }
                ++lineless[m];
            }
            continue;
        }
        Group &g = groups[{f.where.line, int(f.kind)}];
        if (!g.first) {
            g.first = &f;
        }
        ++g.count;
    }
    QList<Diagnostic> out;
    for (auto it = groups.cbegin(); it != groups.cend(); ++it) {
        const Sanitizer::Finding &f = *it->first;
        Diagnostic d;
        d.file = fileName;
        d.line = it.key().first;
        d.severity = Diagnostic::Severity::Error;
        d.message = QStringLiteral("compute-sanitizer: ") + f.summary();
        if (it->count > 1) {
            d.message += QObject::tr(" (and %1 more on this line)").arg(it->count - 1);
        }
        out << d;
        // A race joins its two lines: the other one says where its partner is.
        if ((f.kind == Sanitizer::Finding::Kind::Race || f.kind == Sanitizer::Finding::Kind::Hazard) &&
            f.other.line > 0 && f.other.line != f.where.line && QFileInfo(f.other.path).fileName() == base) {
            Diagnostic o = d;
            o.line = f.other.line;
            o.message = QObject::tr("compute-sanitizer: %1 here races with the %2 at line %3")
                            .arg(f.otherDirection, f.ownDirection)
                            .arg(f.where.line);
            out << o;
        }
    }
    for (const QString &m : linelessOrder) {
        Diagnostic d;
        d.file = fileName;
        d.severity = Diagnostic::Severity::Warning;
        d.message = QStringLiteral("compute-sanitizer: ") + m;
        if (lineless.value(m) > 1) {
            d.message += QObject::tr(" (%1 times)").arg(lineless.value(m));
        }
        out << d;
    }
    return out;
}

QHash<QString, QByteArray> sanitizerMasks(const Sanitizer::Report &report, const QHash<QString, qint64> &elementCounts)
{
    QHash<QString, QByteArray> masks;
    for (const Sanitizer::Finding &f : report.findings) {
        const qint64 n = elementCounts.value(f.buffer, 0);
        if (f.buffer.isEmpty() || n <= 0 || f.element < 0) {
            continue;
        }
        QByteArray &m = masks[f.buffer];
        if (m.isEmpty()) {
            m = QByteArray(n, '\0');
        }
        m[qMin(f.element, n - 1)] = 1;
    }
    return masks;
}

QStringList sanitizerLogLines(const SanitizedRun &run, Sanitizer::Tool tool, int firstN)
{
    QStringList lines;
    const QString name = Sanitizer::toolName(tool);
    if (run.reportError) {
        lines << QObject::tr("Check memory (%1): %2").arg(name, run.reportError->message);
        return lines;
    }
    if (!run.report) {
        if (run.checked.error) {
            lines << QObject::tr("Check memory (%1): %2").arg(name, run.checked.error->message);
        }
        return lines;
    }
    const Sanitizer::Report &r = *run.report;
    if (r.findings.isEmpty()) {
        lines << QObject::tr("Check memory (%1): no findings").arg(name);
        return lines;
    }
    QMap<int, int> counts;
    for (const Sanitizer::Finding &f : r.findings) {
        ++counts[int(f.kind)];
    }
    QStringList parts;
    for (auto it = counts.cbegin(); it != counts.cend(); ++it) {
        parts << sanitizerKindCount(Sanitizer::Finding::Kind(it.key()), it.value());
    }
    lines << QObject::tr("Check memory (%1): %2").arg(name, parts.join(QStringLiteral(", ")));
    QHash<int, int> shown;
    for (const Sanitizer::Finding &f : r.findings) {
        if (firstN >= 0 && shown[int(f.kind)]++ >= firstN) {
            continue;
        }
        lines
            << QStringLiteral("  %1:%2: %3").arg(QFileInfo(f.where.path).fileName()).arg(f.where.line).arg(f.summary());
    }
    for (auto it = counts.cbegin(); it != counts.cend(); ++it) {
        if (firstN >= 0 && it.value() > firstN) {
            lines << QObject::tr("  ... and %1 more %2 (kpg run --sanitize %3 --all-findings shows all)")
                         .arg(it.value() - firstN)
                         .arg(sanitizerKindWords(Sanitizer::Finding::Kind(it.key())), name);
        }
    }
    return lines;
}

MemoryCheck::MemoryCheck(QObject *parent)
    : QObject(parent)
{
    qRegisterMetaType<Kp::SanitizedRun>("Kp::SanitizedRun");
    qRegisterMetaType<Kp::Sanitizer::Tool>("Kp::Sanitizer::Tool");
}

MemoryCheck::~MemoryCheck()
{
    if (m_thread) {
        // The check ends by itself (time-outs bound it); its result goes nowhere.
        m_thread->wait();
    }
}

bool MemoryCheck::start(const Project &project, Sanitizer::Tool tool, bool hazards, int device)
{
    if (m_running.exchange(true)) {
        return false;
    }
    if (m_thread) {
        m_thread->wait();
        delete m_thread;
        m_thread = nullptr;
    }
    QPointer<MemoryCheck> self(this);
    m_thread = QThread::create([self, project, tool, hazards, device, that = this] {
        CheckedRunOptions options;
        options.device = device;
        SanitizeOptions s;
        s.tool = tool;
        s.hazards = hazards;
        auto run = std::make_shared<SanitizedRun>(runProjectSanitized(project, options, s));
        QMetaObject::invokeMethod(
            that,
            [self, run, tool] {
                if (self) {
                    self->m_running = false;
                    Q_EMIT self->finished(*run, tool);
                }
            },
            Qt::QueuedConnection);
    });
    m_thread->start();
    return true;
}

} // namespace Kp

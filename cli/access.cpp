// kpg access: the memory-access map of one launch (docs/memory-access.md).

#include "access/accessrun.h"
#include "client/engineclient.h"
#include "cliutil.h"
#include "core/printable.h"
#include "exitcodes.h"
#include "project/projectio.h"
#include "projectcli.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>

#include <optional>

namespace Kp::Cli {

int accessCommand(const QStringList &args)
{
    QString projectPath;
    QString json;
    QString source;
    QString cell;
    AccessRunOptions options;
    for (qsizetype i = 0; i < args.size(); ++i) {
        const QString &s = args[i];
        if (s == QLatin1String("--step") || s == QLatin1String("--records") || s == QLatin1String("--device") ||
            s == QLatin1String("--json") || s == QLatin1String("--source") || s == QLatin1String("--cell")) {
            if (i + 1 >= args.size()) {
                return usageError(QStringLiteral("access: %1 needs a value").arg(s));
            }
            const QString v = args[++i];
            bool ok = false;
            if (s == QLatin1String("--step")) {
                options.step = v.toInt(&ok) - 1;
                if (!ok || options.step < 0) {
                    return usageError(
                        QStringLiteral("access: --step takes a step number (1, 2, ...), not '%1'").arg(printable(v)));
                }
            } else if (s == QLatin1String("--records")) {
                options.records = v.toLongLong(&ok);
                if (!ok || options.records < 1) {
                    return usageError(
                        QStringLiteral("access: --records takes a positive number of warp records, not '%1'")
                            .arg(printable(v)));
                }
            } else if (s == QLatin1String("--device")) {
                options.device = v.toInt(&ok);
                if (!ok || options.device < 0) {
                    return usageError(
                        QStringLiteral("access: --device takes a GPU number (0, 1, ...), not '%1'").arg(printable(v)));
                }
            } else if (s == QLatin1String("--json")) {
                if (const std::optional<int> bad = checkOutputOption(QStringLiteral("access"), s, v)) {
                    return *bad;
                }
                json = v;
            } else if (s == QLatin1String("--source")) {
                source = v;
            } else {
                cell = v;
            }
        } else if (s.startsWith(QLatin1Char('-')) && s != QLatin1String("-")) {
            return usageError(QStringLiteral("access: unknown option '%1'").arg(printable(s)));
        } else if (projectPath.isEmpty()) {
            projectPath = s;
        } else {
            return usageError(QStringLiteral("access: one project at a time ('%1' and '%2')")
                                  .arg(printable(projectPath), printable(s)));
        }
    }
    if (projectPath.isEmpty()) {
        return usageError(QStringLiteral("access: no project given (kpg access PROJECT.kpg [--step N])"));
    }
    // --cell BUFFER[INDEX]: checked before any work.
    QString cellBuffer;
    qint64 cellIndex = -1;
    if (!cell.isEmpty()) {
        static const QRegularExpression re(QStringLiteral("^([A-Za-z_][A-Za-z0-9_]*)\\[(\\d+)\\]$"));
        const auto m = re.match(cell);
        if (!m.hasMatch()) {
            return usageError(
                QStringLiteral("access: --cell takes BUFFER[INDEX] (a buffer's name and an element, e.g. out[40]), "
                               "not '%1'")
                    .arg(printable(cell)));
        }
        cellBuffer = m.captured(1);
        cellIndex = m.captured(2).toLongLong();
    }
    const Result<Project> project = loadProjectArgument(projectPath, PathScope::Anywhere);
    if (!project) {
        err() << "kpg: " << printable(project.error().message) << "\n";
        return Exit::forError(project.error());
    }
    if (!source.isEmpty()) {
        const Result<QString> text = readSourceArgument(source);
        if (!text) {
            err() << "kpg: " << printable(text.error().message) << "\n";
            return Exit::forError(text.error());
        }
        options.replacementSource = *text;
        options.replacementFileName = QFileInfo(source).fileName();
    }
    if (!cellBuffer.isEmpty()) {
        const auto known = std::find_if(project->buffers.cbegin(), project->buffers.cend(),
                                        [&](const BufferSpec &b) { return b.name == cellBuffer; });
        if (known == project->buffers.cend()) {
            return usageError(QStringLiteral("access: --cell %1: the project has no buffer '%2'")
                                  .arg(printable(cell), printable(cellBuffer)));
        }
    }
    EngineClient engine;
    const Result<AccessReport> report = runAccessMap(*project, &engine, options);
    if (!report) {
        err() << "kpg: access: " << printable(report.error().message)
              << (report.error().code == Error::Code::CompileError ? "; kpg compile shows where" : "") << "\n";
        return Exit::forError(report.error());
    }
    QTextStream &o = json == QLatin1String("-") ? err() : out();
    for (const QString &w : report->warnings) {
        err() << "kpg: warning: " << printable(w) << "\n";
    }
    o << printable(accessReportText(*report), true);
    QJsonObject doc = accessReportJson(*report);
    if (!cellBuffer.isEmpty()) {
        const QList<CellTouch> touches =
            touchesOf(report->summary, report->sites, report->trace, cellBuffer, cellIndex, report->blockDim());
        o << "  " << printable(cellBuffer) << "[" << cellIndex << "]: ";
        if (touches.isEmpty()) {
            o << "no thread of the recorded launch touched it\n";
        }
        QJsonArray list;
        for (const CellTouch &t : touches) {
            const QString kind = touchVerb(t.kind);
            o << "\n    " << kind << " by block (" << t.block[0] << ", " << t.block[1] << ", " << t.block[2]
              << ") thread (" << t.thread[0] << ", " << t.thread[1] << ", " << t.thread[2] << ") on line " << t.line;
            list << QJsonObject{
                {QStringLiteral("kind"), kind},
                {QStringLiteral("block"), QJsonArray{qint64(t.block[0]), qint64(t.block[1]), qint64(t.block[2])}},
                {QStringLiteral("thread"), QJsonArray{qint64(t.thread[0]), qint64(t.thread[1]), qint64(t.thread[2])}},
                {QStringLiteral("line"), t.line},
                {QStringLiteral("order"), t.record}};
        }
        if (!touches.isEmpty()) {
            o << "\n";
        }
        doc.insert(QStringLiteral("cell"), QJsonObject{{QStringLiteral("buffer"), cellBuffer},
                                                       {QStringLiteral("index"), cellIndex},
                                                       {QStringLiteral("touches"), list}});
    }
    o.flush();
    if (!json.isEmpty() &&
        !writeText(json, QJsonDocument(doc).toJson(QJsonDocument::Indented), QStringLiteral("the JSON report"))) {
        return Exit::CannotWrite;
    }
    return Exit::Ok;
}

} // namespace Kp::Cli

#include "workbench/runhistory.h"

#include "core/format.h"
#include "run/runjson.h"

#include "core/safefile.h"
#include <QBrush>
#include <QColor>
#include <QCryptographicHash>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <cmath>
#include <limits>

namespace Kp {

namespace {

Error historyError(const QString &message)
{
    return Error{QStringLiteral("results"), Error::Code::BadInput, {}, message};
}

/** Shortest text that reads back as the same double. */
QString plainNumber(double v)
{
    return QString::number(v, 'g', QLocale::FloatingPointShortest);
}

QString csvField(const QString &s)
{
    if (!s.contains(QLatin1Char(',')) && !s.contains(QLatin1Char('"')) && !s.contains(QLatin1Char('\n')) &&
        !s.contains(QLatin1Char('\r'))) {
        return s;
    }
    QString quoted = s;
    quoted.replace(QLatin1String("\""), QLatin1String("\"\""));
    return QLatin1Char('"') + quoted + QLatin1Char('"');
}

QString statusText(const RunRecord &r)
{
    return r.result.error ? Error::codeName(r.result.error->code) : QStringLiteral("ok");
}

QString throughputText(const RunResult &res)
{
    QStringList parts;
    if (res.bytesPerSecond > 0) {
        parts << formatRate(res.bytesPerSecond, QStringLiteral("B/s"));
    }
    if (res.flopsPerSecond > 0) {
        parts << formatRate(res.flopsPerSecond, QStringLiteral("FLOP/s"));
    }
    return parts.join(QStringLiteral(", "));
}

QJsonArray dimJson(const Dim3 &d)
{
    return QJsonArray{d[0], d[1], d[2]};
}

QString dimCsv(const Dim3 &d)
{
    return QStringLiteral("%1x%2x%3").arg(d[0]).arg(d[1]).arg(d[2]);
}

Status writeAtomically(const QString &path, const QByteArray &bytes)
{
    // core/safefile: atomic for a regular file; /dev/null or a FIFO is written into, not replaced.
    if (Status s = writeOutput(path, bytes, QStringLiteral("the results")); !s) {
        return historyError(s.error().message);
    }
    return Unit{};
}

} // namespace

QString RunRecord::displayLabel() const
{
    return label.isEmpty() ? QStringLiteral("#%1").arg(number) : label;
}

TimingStats RunRecord::stats() const
{
    if (result.stats.count > 0 || result.samplesMs.isEmpty()) {
        return result.stats;
    }
    return computeStats(result.samplesMs);
}

QString compactDim3(const Dim3 &d)
{
    int n = 3;
    while (n > 1 && d[n - 1] == 1) {
        --n;
    }
    QStringList parts;
    for (int i = 0; i < n; ++i) {
        parts << QString::number(d[i]);
    }
    return parts.join(QLatin1Char('x'));
}

RunHistoryModel::RunHistoryModel(QObject *parent)
    : QAbstractTableModel(parent)
{
}

int RunHistoryModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_records.size());
}

int RunHistoryModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant RunHistoryModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    const RunRecord &r = m_records.at(index.row());
    switch (role) {
    case Qt::DisplayRole: return displayData(r, index.column());
    case Qt::ToolTipRole: return toolTipData(r, index.column());
    case SortRole: return sortData(r, index.column());
    case Qt::TextAlignmentRole:
        switch (index.column()) {
        case NumberColumn:
        case MedianColumn:
        case NoiseColumn:
        case ThroughputColumn:
        case SamplesColumn: return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        default: return QVariant::fromValue(Qt::AlignLeft | Qt::AlignVCenter);
        }
    case Qt::ForegroundRole:
        if (index.column() == StatusColumn && r.failed()) {
            return QBrush(QColor(0xc0, 0x1c, 0x28));
        }
        return {};
    default: return {};
    }
}

QVariant RunHistoryModel::displayData(const RunRecord &r, int column) const
{
    const TimingStats st = r.stats();
    switch (column) {
    case NumberColumn: return r.number;
    case TimeColumn: return r.when.toString(QStringLiteral("HH:mm:ss"));
    case KernelColumn: return r.kernel;
    case GridColumn: return compactDim3(r.grid);
    case BlockColumn: return compactDim3(r.block);
    case DefinesColumn: return r.defines.join(QLatin1Char(' '));
    case MedianColumn: return st.count > 0 ? formatDuration(st.medianMs) : QString();
    case NoiseColumn: return st.count > 1 ? QString::number(st.noise * 100, 'f', 2) + QStringLiteral(" %") : QString();
    case ThroughputColumn: return throughputText(r.result);
    case SamplesColumn: return st.count;
    case StatusColumn: return statusText(r);
    default: return {};
    }
}

QVariant RunHistoryModel::toolTipData(const RunRecord &r, int column) const
{
    const TimingStats st = r.stats();
    switch (column) {
    case TimeColumn: return r.when.toString(Qt::ISODate);
    case KernelColumn: {
        QStringList lines{r.kernel};
        if (!r.label.isEmpty()) {
            lines << r.label;
        }
        if (!r.result.device.isEmpty()) {
            lines << r.result.device;
        }
        return lines.join(QLatin1Char('\n'));
    }
    case GridColumn: return dim3Text(r.grid);
    case BlockColumn: return dim3Text(r.block);
    case MedianColumn:
    case NoiseColumn:
    case SamplesColumn: {
        if (st.count == 0) {
            return r.result.timingNote.isEmpty() ? QVariant() : QVariant(r.result.timingNote);
        }
        QStringList lines;
        lines << QStringLiteral("median %1, min %2, max %3")
                     .arg(formatDuration(st.medianMs), formatDuration(st.minMs), formatDuration(st.maxMs));
        lines << QStringLiteral("mean %1, stdev %2").arg(formatDuration(st.meanMs), formatDuration(st.stdevMs));
        if (!r.result.timingMode.isEmpty()) {
            lines << QStringLiteral("%1 timing, %2 launch(es) per sample").arg(r.result.timingMode).arg(r.result.batch);
        }
        if (!r.result.timingNote.isEmpty()) {
            lines << r.result.timingNote;
        }
        return lines.join(QLatin1Char('\n'));
    }
    case ThroughputColumn: {
        if (r.result.bytesPerSecond <= 0 && r.result.flopsPerSecond <= 0) {
            return QStringLiteral("The project gives no throughput expressions");
        }
        return QStringLiteral("%1 bytes, %2 FLOP per launch, at the median time")
            .arg(plainNumber(r.result.bytes), plainNumber(r.result.flops));
    }
    case StatusColumn: {
        if (!r.result.error) {
            return r.result.warnings.isEmpty() ? QVariant() : QVariant(r.result.warnings.join(QLatin1Char('\n')));
        }
        QString text = r.result.error->toString();
        if (r.result.failedStep >= 0) {
            text += QStringLiteral("\n(launch step %1)").arg(r.result.failedStep + 1);
        }
        return text;
    }
    default: return {};
    }
}

QVariant RunHistoryModel::sortData(const RunRecord &r, int column) const
{
    const TimingStats st = r.stats();
    // Runs without samples sort after every timed run.
    constexpr double none = std::numeric_limits<double>::infinity();
    switch (column) {
    case NumberColumn: return r.number;
    case TimeColumn: return r.when;
    case GridColumn: return double(r.grid[0]) * double(r.grid[1]) * double(r.grid[2]);
    case BlockColumn: return double(r.block[0]) * double(r.block[1]) * double(r.block[2]);
    case MedianColumn: return st.count > 0 ? st.medianMs : none;
    case NoiseColumn: return st.count > 1 ? st.noise : none;
    case ThroughputColumn: return r.result.bytesPerSecond > 0 ? r.result.bytesPerSecond : r.result.flopsPerSecond;
    case SamplesColumn: return st.count;
    default: return displayData(r, column);
    }
}

QVariant RunHistoryModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount) {
        return QAbstractTableModel::headerData(section, orientation, role);
    }
    if (role == Qt::DisplayRole) {
        static const char *const names[ColumnCount] = {"#",      "Time",  "Kernel",     "Grid",    "Block", "Defines",
                                                       "Median", "Noise", "Throughput", "Samples", "Status"};
        return QString::fromLatin1(names[section]);
    }
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case MedianColumn: return QStringLiteral("Median time of one launch");
        case NoiseColumn: return QStringLiteral("Relative standard deviation of the samples (stdev / mean)");
        case ThroughputColumn: return QStringLiteral("From the project's throughput expressions, at the median time");
        case SamplesColumn: return QStringLiteral("Number of timing samples");
        default: break;
        }
    }
    return QAbstractTableModel::headerData(section, orientation, role);
}

int RunHistoryModel::append(RunRecord record)
{
    if (record.number <= 0 || record.number < m_nextNumber) {
        record.number = m_nextNumber;
    }
    m_nextNumber = std::max(m_nextNumber, record.number + 1);
    if (!record.when.isValid()) {
        record.when = QDateTime::currentDateTime();
    }
    const int row = int(m_records.size());
    beginInsertRows({}, row, row);
    m_records.append(std::move(record));
    endInsertRows();
    return row;
}

const RunRecord &RunHistoryModel::record(int row) const
{
    Q_ASSERT(row >= 0 && row < m_records.size());
    return m_records.at(row);
}

void RunHistoryModel::clear()
{
    if (m_records.isEmpty()) {
        return;
    }
    beginResetModel();
    m_records.clear();
    endResetModel();
}

void RunHistoryModel::setRecords(const QList<RunRecord> &records)
{
    beginResetModel();
    m_records = records;
    for (const RunRecord &r : records) {
        m_nextNumber = std::max(m_nextNumber, r.number + 1);
    }
    endResetModel();
}

QByteArray RunHistoryModel::toCsv() const
{
    QStringList lines;
    lines << QStringLiteral("number,time,kernel,label,grid,block,defines,status,error,median_ms,min_ms,max_ms,"
                            "mean_ms,stdev_ms,noise,samples,bytes_per_second,flops_per_second,timing_mode,batch,"
                            "device");
    for (const RunRecord &r : m_records) {
        const TimingStats st = r.stats();
        const bool timed = st.count > 0;
        const auto num = [timed](double v) { return timed ? plainNumber(v) : QString(); };
        const auto rate = [](double v) { return v > 0 ? plainNumber(v) : QString(); };
        QStringList f;
        f << QString::number(r.number) << r.when.toString(Qt::ISODateWithMs) << csvField(r.kernel) << csvField(r.label)
          << dimCsv(r.grid) << dimCsv(r.block) << csvField(r.defines.join(QLatin1Char(' '))) << statusText(r)
          << csvField(r.result.error ? r.result.error->message : QString()) << num(st.medianMs) << num(st.minMs)
          << num(st.maxMs) << num(st.meanMs) << num(st.stdevMs) << num(st.noise) << QString::number(st.count)
          << rate(r.result.bytesPerSecond) << rate(r.result.flopsPerSecond) << csvField(r.result.timingMode)
          << QString::number(r.result.batch) << csvField(r.result.device);
        lines << f.join(QLatin1Char(','));
    }
    return (lines.join(QLatin1Char('\n')) + QLatin1Char('\n')).toUtf8();
}

QByteArray RunHistoryModel::toJson() const
{
    QJsonArray runs;
    for (const RunRecord &r : m_records) {
        const TimingStats st = r.stats();
        QJsonArray samples;
        for (double v : r.result.samplesMs) {
            samples.append(v);
        }
        QJsonObject o{
            {QStringLiteral("number"), r.number},
            {QStringLiteral("time"), r.when.toString(Qt::ISODateWithMs)},
            {QStringLiteral("kernel"), r.kernel},
            {QStringLiteral("label"), r.label},
            {QStringLiteral("grid"), dimJson(r.grid)},
            {QStringLiteral("block"), dimJson(r.block)},
            {QStringLiteral("defines"), QJsonArray::fromStringList(r.defines)},
            {QStringLiteral("status"), statusText(r)},
            {QStringLiteral("device"), r.result.device},
            {QStringLiteral("timingMode"), r.result.timingMode},
            {QStringLiteral("batch"), r.result.batch},
            {QStringLiteral("converged"), r.result.converged},
            {QStringLiteral("timingNote"), r.result.timingNote},
            {QStringLiteral("stats"), QJsonObject::fromVariantMap(st.toVariant())},
            {QStringLiteral("bytesPerSecond"), r.result.bytesPerSecond},
            {QStringLiteral("flopsPerSecond"), r.result.flopsPerSecond},
            {QStringLiteral("samplesMs"), samples},
        };
        if (r.result.error) {
            o.insert(QStringLiteral("error"), QJsonObject::fromVariantMap(r.result.error->toVariant()));
            o.insert(QStringLiteral("failedStep"), r.result.failedStep);
        }
        // The whole result in the one form `kpg run --json` writes (docs/kpg-run-json.md),
        // so tools read a GUI export and a kpg run alike.
        o.insert(QStringLiteral("result"), runResultToJson(r.result));
        runs.append(o);
    }
    return QJsonDocument(runs).toJson(QJsonDocument::Indented);
}

Status RunHistoryModel::exportCsv(const QString &path) const
{
    return writeAtomically(path, toCsv());
}

Status RunHistoryModel::exportJson(const QString &path) const
{
    return writeAtomically(path, toJson());
}

QString historyPathFor(const QString &projectPath)
{
    if (projectPath.isEmpty() || projectPath.startsWith(QLatin1Char(':')) || !QFileInfo(projectPath).isFile()) {
        return {};
    }
    return projectPath + QStringLiteral(".history.json");
}

QByteArray historyToJson(const QList<RunRecord> &records)
{
    QJsonObject sources;
    QJsonArray runs;
    // The newest runs, as many as the run and sample limits allow.
    qsizetype first = records.size();
    qint64 samples = 0;
    while (first > 0 && records.size() - first < kMaxHistoryRuns &&
           samples + records[first - 1].result.samplesMs.size() <= kMaxHistorySamples) {
        samples += records[--first].result.samplesMs.size();
    }
    for (qsizetype i = first; i < records.size(); ++i) {
        const RunRecord &r = records[i];
        // Most runs share their source with the one before: each text once, by its hash.
        QString sourceId;
        if (!r.source.isEmpty()) {
            sourceId = QString::fromLatin1(
                QCryptographicHash::hash(r.source.toUtf8(), QCryptographicHash::Sha1).toHex().left(16));
            sources.insert(sourceId, r.source);
        }
        QJsonObject resources;
        for (auto it = r.resources.cbegin(); it != r.resources.cend(); ++it) {
            resources.insert(it.key(), QJsonObject::fromVariantMap(it.value().toVariant()));
        }
        runs.append(QJsonObject{
            {QStringLiteral("number"), r.number},
            {QStringLiteral("time"), r.when.toString(Qt::ISODateWithMs)},
            {QStringLiteral("kernel"), r.kernel},
            {QStringLiteral("label"), r.label},
            {QStringLiteral("grid"), dimJson(r.grid)},
            {QStringLiteral("block"), dimJson(r.block)},
            {QStringLiteral("defines"), QJsonArray::fromStringList(r.defines)},
            {QStringLiteral("source"), sourceId},
            {QStringLiteral("compileOptions"), QJsonArray::fromStringList(r.compileOptions)},
            {QStringLiteral("resources"), resources},
            {QStringLiteral("result"), QJsonObject::fromVariantMap(r.result.toVariant())},
        });
    }
    const QJsonObject root{{QStringLiteral("format"), QStringLiteral("kpg-run-history")},
                           {QStringLiteral("version"), 1},
                           {QStringLiteral("sources"), sources},
                           {QStringLiteral("runs"), runs}};
    return QJsonDocument(root).toJson(QJsonDocument::Compact);
}

Result<QList<RunRecord>> historyFromJson(const QByteArray &json, const QString &path)
{
    const auto bad = [&path](const QString &what) { return historyError(QStringLiteral("%1: %2").arg(path, what)); };
    QJsonParseError parseError{};
    const QJsonDocument doc = QJsonDocument::fromJson(json, &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        return bad(QStringLiteral("not JSON (%1 at byte %2)").arg(parseError.errorString()).arg(parseError.offset));
    }
    const QJsonObject root = doc.object();
    if (!doc.isObject() || root.value(QStringLiteral("format")).toString() != QLatin1String("kpg-run-history")) {
        return bad(QStringLiteral("not a run history (\"format\": \"kpg-run-history\" is missing)"));
    }
    if (root.value(QStringLiteral("version")).toInt() != 1) {
        return bad(QStringLiteral("history version %1; this program reads version 1")
                       .arg(root.value(QStringLiteral("version")).toVariant().toString()));
    }
    const QJsonObject sources = root.value(QStringLiteral("sources")).toObject();
    const QJsonValue runsValue = root.value(QStringLiteral("runs"));
    if (!runsValue.isArray()) {
        return bad(QStringLiteral("\"runs\" must be an array"));
    }
    const QJsonArray runs = runsValue.toArray();
    QList<RunRecord> records;
    for (qsizetype i = 0; i < runs.size(); ++i) {
        const QJsonObject o = runs[i].toObject();
        const QString where = QStringLiteral("runs[%1]").arg(i);
        if (!runs[i].isObject() || !o.value(QStringLiteral("number")).isDouble() ||
            o.value(QStringLiteral("number")).toInt() < 1) {
            return bad(QStringLiteral("%1.number must be a whole number from 1").arg(where));
        }
        if (!o.value(QStringLiteral("result")).isObject()) {
            return bad(QStringLiteral("%1.result must be an object").arg(where));
        }
        RunRecord r;
        r.number = o.value(QStringLiteral("number")).toInt();
        r.when = QDateTime::fromString(o.value(QStringLiteral("time")).toString(), Qt::ISODateWithMs);
        r.kernel = o.value(QStringLiteral("kernel")).toString();
        r.label = o.value(QStringLiteral("label")).toString();
        for (const char *key : {"grid", "block"}) {
            const QJsonArray d = o.value(QLatin1String(key)).toArray();
            Dim3 &dim = qstrcmp(key, "grid") == 0 ? r.grid : r.block;
            for (int k = 0; k < 3 && k < d.size(); ++k) {
                dim[size_t(k)] = std::max<qint64>(1, d[k].toInteger(1));
            }
        }
        for (const QJsonValue &v : o.value(QStringLiteral("defines")).toArray()) {
            r.defines << v.toString();
        }
        const QString sourceId = o.value(QStringLiteral("source")).toString();
        if (!sourceId.isEmpty()) {
            if (!sources.value(sourceId).isString()) {
                return bad(QStringLiteral("%1.source names \"%2\", which \"sources\" lacks").arg(where, sourceId));
            }
            r.source = sources.value(sourceId).toString();
        }
        for (const QJsonValue &v : o.value(QStringLiteral("compileOptions")).toArray()) {
            r.compileOptions << v.toString();
        }
        const QJsonObject resources = o.value(QStringLiteral("resources")).toObject();
        for (auto it = resources.constBegin(); it != resources.constEnd(); ++it) {
            r.resources.insert(it.key(), KernelResources::fromVariant(it.value().toObject().toVariantMap()));
        }
        r.result = RunResult::fromVariant(o.value(QStringLiteral("result")).toObject().toVariantMap());
        for (double v : std::as_const(r.result.samplesMs)) {
            if (!(v >= 0) || !std::isfinite(v)) {
                return bad(QStringLiteral("%1.result.samplesMs holds %2; samples are times of 0 ms or more")
                               .arg(where)
                               .arg(v));
            }
        }
        records << r;
    }
    return records;
}

Status saveHistory(const QString &path, const QList<RunRecord> &records)
{
    return writeAtomically(path, historyToJson(records));
}

Result<QList<RunRecord>> loadHistory(const QString &path)
{
    if (!QFileInfo::exists(path)) {
        return QList<RunRecord>{};
    }
    Result<QByteArray> bytes = readRegularFile(path, kMaxHistoryBytes, QStringLiteral("the run history"));
    if (!bytes) {
        return historyError(bytes.error().message);
    }
    return historyFromJson(*bytes, path);
}

} // namespace Kp

#pragma once

#include "compile/compiletypes.h"
#include "core/result.h"
#include "run/runtypes.h"

#include <QAbstractTableModel>
#include <QDateTime>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

namespace Kp {

/** One run as the history remembers it: what was launched and what came back. */
struct RunRecord
{
    int number = 0; ///< 1, 2, ... in the order of the runs; 0 = let RunHistoryModel::append() number it
    QDateTime when; ///< invalid = let append() stamp it with the current time
    QString kernel; ///< the launched kernel (several steps: "a, b")
    Dim3 grid{1, 1, 1};
    Dim3 block{1, 1, 1};
    QStringList defines;                      ///< the compile defines ("N=16", "USE_X")
    QString label;                            ///< a short name for charts, e.g. "block=128"; empty = "#number"
    RunResult result;                         ///< kept whole, failed runs included
    QString source;                           ///< the kernel source as it ran; empty when not known
    QStringList compileOptions;               ///< what NVRTC was given for it
    QMap<QString, KernelResources> resources; ///< ptxas' registers, spills and shared memory per kernel

    /** label, or "#number" when there is none. */
    QString displayLabel() const;
    /** result.stats, or computed from result.samplesMs when the result carries none. */
    TimingStats stats() const;
    /** True when the run failed (result.error is set). */
    bool failed() const { return result.error.has_value(); }
};

/**
 * The run history saved beside a project: PROJECT.kpg.history.json holds the
 * last kMaxHistoryRuns runs (each source text stored once) and is read only
 * up to kMaxHistoryBytes. Written atomically (core/safefile).
 */
constexpr int kMaxHistoryRuns = 200;
constexpr qint64 kMaxHistoryBytes = 64ll << 20;
/** Samples kept in the file at most: older runs are left out beyond it (about 40 MiB of JSON). */
constexpr qint64 kMaxHistorySamples = 2'000'000;

/** PROJECT.kpg.history.json for PROJECT.kpg; empty for a project that is not a file (a preset, a new one). */
QString historyPathFor(const QString &projectPath);
/** The history file's JSON: {"format", "version", "sources", "runs"}, the last kMaxHistoryRuns runs. */
QByteArray historyToJson(const QList<RunRecord> &records);
/** Parses historyToJson()'s form; the error names the file (path), the run and the field. */
Result<QList<RunRecord>> historyFromJson(const QByteArray &json, const QString &path);
/** Writes historyToJson(records) to path, atomically. */
Status saveHistory(const QString &path, const QList<RunRecord> &records);
/** Reads path; a missing file is an empty history. Files over kMaxHistoryBytes are refused unread. */
Result<QList<RunRecord>> loadHistory(const QString &path);

/** "256", "16x16", "8x8x4": a Dim3 without its trailing 1s, for tables and labels. */
QString compactDim3(const Dim3 &d);

/**
 * The runs of a session, one row each, newest last. Failed runs stay in the
 * history with their error, so nothing a run told us is lost. GUI thread only.
 */
class RunHistoryModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column {
        NumberColumn,
        TimeColumn,
        KernelColumn,
        GridColumn,
        BlockColumn,
        DefinesColumn,
        MedianColumn,
        NoiseColumn,
        ThroughputColumn,
        SamplesColumn,
        StatusColumn,
        ColumnCount
    };
    enum Role {
        /** A value that sorts as the column means it (numbers as numbers, failed runs last by median). */
        SortRole = Qt::UserRole + 1,
    };

    explicit RunHistoryModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    /**
     * Adds a run as the last row. A record without a number, or with one
     * below the next (a loaded history already used it), gets the next one;
     * a record without a time gets the current time. Returns its row.
     */
    int append(RunRecord record);
    /** The number the next appended run gets (after a loaded history's highest). */
    int nextNumber() const { return m_nextNumber; }
    /** The run in row; row must be valid. */
    const RunRecord &record(int row) const;
    /** All runs, oldest first. */
    const QList<RunRecord> &records() const { return m_records; }
    /** Forgets every run; numbering goes on from where it was. */
    void clear();
    /** Replaces the history with records (a loaded history file); numbering goes on after the highest. */
    void setRecords(const QList<RunRecord> &records);

    /**
     * One line per run, a header line first; numbers are plain and in base
     * units (milliseconds, bytes and FLOP per second, noise as a fraction).
     * Written atomically (QSaveFile).
     */
    Status exportCsv(const QString &path) const;
    /** A JSON array with one object per run, every sample included. Written atomically. */
    Status exportJson(const QString &path) const;

    /** The CSV text exportCsv() writes. */
    QByteArray toCsv() const;
    /** The JSON text exportJson() writes. */
    QByteArray toJson() const;

private:
    QVariant displayData(const RunRecord &r, int column) const;
    QVariant toolTipData(const RunRecord &r, int column) const;
    QVariant sortData(const RunRecord &r, int column) const;

    QList<RunRecord> m_records;
    int m_nextNumber = 1;
};

} // namespace Kp

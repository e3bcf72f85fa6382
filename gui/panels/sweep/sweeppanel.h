#pragma once

#include "run/ceilings.h"
#include "sweep/sweeprunner.h"

#include <QWidget>

#include <functional>
#include <memory>
#include <optional>
#include <thread>

class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;
class QTableWidget;
class QTimer;

namespace Kp {

class Workbench;

class EngineClient;
class ProjectDocument;
class SweepPlotView;
class SweepResultsModel;

/**
 * The Sweep panel (docs/sweep.md, "In the window"): an axes editor (a name
 * from block/grid extents, the project's defines, template arguments and
 * scalars; values as a list or a range with pow2), cartesian or zipped, Run
 * and Abort with progress and time left, the table of points filling as
 * they land (sortable), CSV and JSON export, and the plot of the points:
 * time or throughput against an axis with a line per value of another, a
 * heatmap, or the roofline against the measured device ceilings. The
 * points run in the engine's SweepRunner, over every GPU of GPU 0's model.
 */
class SweepPanel : public QWidget
{
    Q_OBJECT
public:
    explicit SweepPanel(QWidget *parent = nullptr);
    /**
     * The dock's panel: sweeps wb's document with the editor's text as it is
     * now, on the GPUs wb's Devices found; the roofline shows wb's last run.
     */
    SweepPanel(Workbench &wb, QWidget *parent = nullptr);
    ~SweepPanel() override;

    /** The project the sweep runs (its current text and settings at Run). */
    void setDocument(ProjectDocument *document);
    /** Fills the axes editor ("block.x=32:1024:pow2", ...). */
    void setAxes(const QStringList &specs, bool zip);
    /** The axes as written in the editor. */
    QStringList axesText() const;
    bool zip() const;

    /** Parses the axes and starts the sweep; a bad axis is refused with its message (also shown). */
    Status start();
    void abort();
    bool isRunning() const;

    /**
     * Shows a sweep's points without running it (a recorded sweep, tests):
     * the table and plot take these axes, then addResult() adds points.
     */
    void showSweep(const QList<SweepAxis> &axes, int planned);
    /** Adds one point to the table and (coalesced) to the plot. */
    void addResult(const SweepPointResult &result);
    const QList<SweepPointResult> &results() const;

    Status exportCsv(const QString &path) const;
    Status exportJson(const QString &path) const;

    /** The device's measured ceilings, drawn on throughput plots and the roofline. */
    void setCeilings(const std::optional<DeviceCeilings> &ceilings);
    /** Measures GPU 0's ceilings (or reads them from the cache) in the background. */
    void measureCeilings(bool remeasure);
    /** The window's last run, placed on the roofline beside the sweep's points. */
    void setCurrentRun(const RunResult &run);
    /** The plot shown: "time", "throughput", "heatmap" or "roofline". */
    void setPlotKind(const QString &kind);
    QString plotKind() const;
    /** Redraws the plot now (otherwise coalesced, at most every 150 ms while points land). */
    void refreshPlot();

    QTableView *table() const { return m_table; }
    SweepPlotView *plotView() const { return m_plot; }
    QString statusText() const;

Q_SIGNALS:
    /** The sweep ended, all points in, or aborted (the finished points kept). */
    void sweepFinished(bool aborted);

private:
    /** The GPUs (the window's Devices' answer, else a worker's own), then then(). */
    void withDevices(std::function<void(const Result<DeviceList> &)> then);

    void addAxisRow(const QString &name, const QString &values);
    QStringList axisNames() const;
    void startOnDevices(const QList<int> &devices, const std::optional<DeviceInfo> &first, int driverVersion);
    void onFinished(bool aborted);
    void updateButtons();
    void updateSeriesChoices();

    ProjectDocument *m_doc = nullptr;
    QTableWidget *m_axes = nullptr;
    QComboBox *m_mode = nullptr;
    QPushButton *m_run = nullptr;
    QPushButton *m_abort = nullptr;
    QPushButton *m_csv = nullptr;
    QPushButton *m_json = nullptr;
    QPushButton *m_measure = nullptr;
    QProgressBar *m_progress = nullptr;
    QLabel *m_status = nullptr;
    QTableView *m_table = nullptr;
    SweepResultsModel *m_model = nullptr;
    QSortFilterProxyModel *m_proxy = nullptr;
    SweepPlotView *m_plot = nullptr;
    QComboBox *m_plotKind = nullptr;
    QComboBox *m_xAxis = nullptr;
    QComboBox *m_series = nullptr;
    QTimer *m_plotTimer = nullptr;
    std::unique_ptr<SweepRunner> m_runner;
    std::unique_ptr<EngineClient> m_engine; ///< lists the GPUs before a sweep, when no Devices knows them
    Workbench *m_workbench = nullptr;       ///< the window's (its Devices and the editor's text), or none
    Project m_project;                      ///< what the shown sweep ran
    bool m_zip = false;
    int m_planned = 0;
    bool m_starting = false;
    std::optional<DeviceCeilings> m_ceilings;
    std::optional<RunResult> m_currentRun;
    std::unique_ptr<std::thread> m_measuring; ///< measureCeilings' thread, joined before the next
};

} // namespace Kp

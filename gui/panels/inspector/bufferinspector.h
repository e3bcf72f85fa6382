#pragma once

#include "buffergridmodel.h"
#include "run/runtypes.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QString>
#include <QWidget>

#include <memory>

class QAction;
class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QSpinBox;
class QTabWidget;
class QTableView;
class QToolBar;
class QToolButton;

namespace Kp {

class Workbench;

struct HostBuffer;
class DiffView;
class ImageView;

/**
 * The buffer inspector (a dock's contents): a chooser of the document's
 * buffers, tabs Grid | Image | Diff over the one chosen, a toolbar for what
 * the current tab needs (number format, precision, columns of 1-D buffers,
 * slice of 3-D ones, go to index, colormap, range, channels) and a
 * statistics line "min 0  max 1  mean 0.5  NaN 0  Inf 0".
 *
 * Nothing is copied: the views read the buffers' shared memory in place.
 * The one exception is beforeRun(): it keeps each buffer's bytes (within
 * snapshotBudget(), the shown buffer first) so afterRun() can highlight
 * what the run changed and the Diff tab can compare with the previous run;
 * unchecking "Changes" turns that off. Statistics of large buffers are
 * computed on a pool thread and land later. GUI thread only.
 */
class BufferInspector : public QWidget
{
    Q_OBJECT
public:
    enum class Tab { Grid, Image, Diff };

    explicit BufferInspector(QWidget *parent = nullptr);
    /** The dock's inspector: follows wb's runs, checks, memory checks and navigation (inspectordock.cpp). */
    BufferInspector(Workbench &wb, QWidget *parent = nullptr);
    ~BufferInspector() override;

    /**
     * The buffers to choose from (the document's HostBuffers::all()); keeps
     * references to them. The shown buffer stays when its name is still
     * there (the first one is shown otherwise); if its contents changed
     * (generation) the views refresh. Cheap when nothing changed.
     */
    void setBuffers(QList<std::shared_ptr<HostBuffer>> buffers);
    /** Shows the buffer of that name (nothing happens for an unknown name). */
    void showBuffer(const QString &name);
    /** The Image tab when image is true, the Grid otherwise. */
    void showImage(bool image);
    /** The launch the image's hover line gives thread indices for. */
    void setLaunch(Dim3 grid, Dim3 block);
    /** Before a run: keeps the buffers' bytes to compare with afterwards. */
    void beforeRun();
    /** After a run: refreshes every view and the statistics, highlighting what changed. */
    void afterRun();
    /**
     * afterRun() in a later turn of the event loop, as one refresh with the
     * one setBuffers() may have scheduled: a run's landing refreshes the
     * views (statistics, the image's colours) once, not twice.
     */
    void afterRunLater();

    /**
     * Goes to a flat index ("1234") or C-order coordinates ("3, 4"): selects
     * the cell on the Grid tab, centres the pixel on the Image tab. False
     * (with the reason in the field's tooltip) when it is out of range.
     */
    bool goTo(const QString &text);

    /**
     * The failing cells of a check on buffer (one byte per element, non-zero
     * where it failed; CheckData::failedMask): red in the grid, and a heatmap
     * on the Diff tab, where the check is offered as what to compare with.
     */
    void setFailedCells(const QString &buffer, const QString &check, std::shared_ptr<const QByteArray> mask);
    /** Forgets every check's failing cells (a new run, another project). */
    void clearFailedCells();
    /** Shows the failing cells of check on the Diff tab (its buffer first). False when none are known. */
    bool showFailedCells(const QString &check);

    void setCurrentTab(Tab tab);
    Tab currentTab() const;
    QString currentBufferName() const;
    std::shared_ptr<const HostBuffer> currentBuffer() const { return m_current; }
    /** The statistics line as shown. */
    QString statsText() const;
    /** The hover or current-cell line as shown. */
    QString hoverLine() const;

    /** Largest total of bytes beforeRun() copies (default 512 MiB). */
    void setSnapshotBudget(qint64 bytes) { m_snapshotBudget = bytes; }
    qint64 snapshotBudget() const { return m_snapshotBudget; }
    /** Whether beforeRun() takes snapshots and the grid highlights changes (the "Changes" box). */
    void setSnapshotsEnabled(bool on);
    bool snapshotsEnabled() const { return m_snapshotsEnabled; }
    /** The snapshot kept of a buffer, or nullptr. */
    std::shared_ptr<const QByteArray> snapshotOf(const QString &name) const { return m_snapshots.value(name); }

    BufferGridModel *gridModel() const { return m_model; }
    QTableView *gridView() const { return m_gridView; }
    ImageView *imageView() const { return m_image; }
    DiffView *diffView() const { return m_diff; }

    /** Statistics of up to this many components are computed at once, larger ones on a pool thread. */
    static constexpr qint64 kSyncStatsComponents = 16ll * 1024 * 1024;

private:
    void buildUi();
    /** The grid's "Who touched this cell?" entry, over wb's access report (inspectordock.cpp). */
    void followAccess(Workbench &wb);
    void setCurrent(std::shared_ptr<const HostBuffer> buffer);
    void refreshViews();
    /** Diff (when shown), info, controls and statistics for the current buffer. */
    void refreshDerived();
    void scheduleRefresh();
    void updateInfo();
    void updateControls();
    void updateStats();
    void showStats(const BufferStats &stats);
    void updateDiff();
    void rebuildAgainst();
    void applyRange();
    void applyChannels();

    /** The check's failing cells of the current buffer the grid shows (the last one asked for, else the first). */
    void applyFailedToGrid();

    struct FailedCells
    {
        QString buffer;
        QString check;
        std::shared_ptr<const QByteArray> mask;
    };
    QList<FailedCells> m_failed;
    QString m_failedShown; ///< the check showFailedCells() showed last

    QList<std::shared_ptr<const HostBuffer>> m_buffers;
    std::shared_ptr<const HostBuffer> m_current;
    quint64 m_shownGeneration = 0;
    bool m_refreshPending = false;
    bool m_afterRunPending = false; ///< the scheduled refresh is afterRun()'s (afterRunLater())
    bool m_diffStale = true;
    quint64 m_statsTicket = 0;
    QHash<QString, std::shared_ptr<const QByteArray>> m_snapshots;
    qint64 m_snapshotBudget = 512ll * 1024 * 1024;
    bool m_snapshotsEnabled = true;

    BufferGridModel *m_model;
    QComboBox *m_chooser = nullptr;
    QLabel *m_info = nullptr;
    QToolBar *m_tools = nullptr;
    QComboBox *m_format = nullptr;
    QSpinBox *m_precision = nullptr;
    QSpinBox *m_columns = nullptr;
    QSpinBox *m_width = nullptr;
    QSpinBox *m_slice = nullptr;
    QLineEdit *m_goTo = nullptr;
    QComboBox *m_colormap = nullptr;
    QComboBox *m_rangeMode = nullptr;
    QLineEdit *m_rangeLow = nullptr;
    QLineEdit *m_rangeHigh = nullptr;
    QToolButton *m_channelButtons[4] = {};
    QCheckBox *m_highlight = nullptr;
    QTabWidget *m_tabs = nullptr;
    QTableView *m_gridView = nullptr;
    ImageView *m_image = nullptr;
    QComboBox *m_against = nullptr;
    DiffView *m_diff = nullptr;
    QLabel *m_stats = nullptr;
    QLabel *m_hover = nullptr;

    // Toolbar groups, shown for the tab and buffer that need them.
    QList<QAction *> m_gridActions;
    QList<QAction *> m_columnsActions;
    QList<QAction *> m_widthActions;
    QList<QAction *> m_sliceActions;
    QList<QAction *> m_goToActions;
    QList<QAction *> m_colorActions;
    QList<QAction *> m_rangeActions;
    QList<QAction *> m_channelActions;
};

} // namespace Kp

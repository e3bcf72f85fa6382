#pragma once

#include "buffers/dtype.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <QWidget>

#include <memory>

class QComboBox;
class QLabel;
class QLineEdit;
class QTableWidget;

namespace Kp {

struct HostBuffer;
class ImageView;

/** Which error the heatmap shows and the tolerance applies to. */
enum class ErrorKind {
    Absolute, ///< |a - b|
    Relative, ///< |a - b| / max(|a|, |b|), 0 when both are 0
};

/**
 * The error of one pair of components. NaN against NaN and equal
 * infinities count as equal (0); NaN against anything else, or infinities
 * that differ, is an infinite error.
 */
double componentError(double a, double b, ErrorKind kind);

/** One element that differs by more than the tolerance. */
struct DiffMismatch
{
    qint64 index = 0;  ///< flat element index
    int component = 0; ///< the component with the largest error
    double a = 0;      ///< that component's values
    double b = 0;
    double absError = 0; ///< |a - b| of that component
    double relError = 0; ///< relative error of that component
};

/** The outcome of comparing two buffers element by element. */
struct DiffResult
{
    qint64 compared = 0;        ///< elements compared
    qint64 mismatchCount = 0;   ///< elements whose error is above the tolerance
    double maxError = 0;        ///< largest finite error (of the chosen kind) of any component
    bool infiniteError = false; ///< some error was infinite (a NaN or an infinity on one side only)
    QList<DiffMismatch> first;  ///< the first mismatches, in index order
};

/**
 * Compares elements elements of dtypes typeA at a and typeB at b, which
 * must have the same number of components; an element mismatches when the
 * error of any component exceeds tolerance (0: any difference). A plain
 * loop over both memories (float32 against float32 without conversions);
 * reads only, any thread.
 */
DiffResult compareElements(DType typeA, const void *a, DType typeB, const void *b, qint64 elements, ErrorKind kind,
                           double tolerance, int maxListed = 100);

/**
 * A buffer against another of the same shape, or against its own bytes
 * before the run: a heatmap of the error (an ImageView over an on-the-fly
 * source, so nothing is copied) and a list of the first kMaxListed
 * mismatches (index, a, b, |a-b|, relative). Holds references to what it
 * compares. GUI thread only.
 */
class DiffView : public QWidget
{
    Q_OBJECT
public:
    static constexpr int kMaxListed = 100;

    explicit DiffView(QWidget *parent = nullptr);
    ~DiffView() override;

    /** Compares a (shown as "a") with b; they need the same shape and number of components. */
    void compare(std::shared_ptr<const HostBuffer> a, std::shared_ptr<const HostBuffer> b);
    /** Compares a with previous, its bytes before the run (BufferGridModel::snapshot()). */
    void compareWithSnapshot(std::shared_ptr<const HostBuffer> a, std::shared_ptr<const QByteArray> previous);
    /**
     * The failing cells of a check on a (mask: one byte per element,
     * non-zero where it failed; CheckData::failedMask): a heatmap of the
     * mask, failing cells at the top of the colormap, and the first failing
     * elements in the list. check names it in the summary.
     */
    void showFailedCells(std::shared_ptr<const HostBuffer> a, std::shared_ptr<const QByteArray> mask,
                         const QString &check);
    /** True while showFailedCells() is what is shown. */
    bool showsFailedCells() const { return m_mask != nullptr; }
    /** Shows nothing (with a reason, when given). */
    void clear(const QString &reason = QString());

    void setErrorKind(ErrorKind kind);
    ErrorKind errorKind() const { return m_kind; }
    /** Errors above tolerance are mismatches (default 0: any difference). */
    void setTolerance(double tolerance);
    double tolerance() const { return m_tolerance; }
    /** Heatmap row width for 1-D buffers (0: near square) and slice of 3-D ones. */
    void setWidth1D(qint64 width);
    void setSlice(qint64 z);

    /** Compares again (the contents changed after a run). */
    void refresh();

    const DiffResult &result() const { return m_result; }
    /** "3 of 1024 elements differ (|a-b| > 0); largest |a-b| 0.5", or why nothing is compared. */
    QString summary() const;
    ImageView *heatmap() const { return m_heatmap; }
    QTableWidget *mismatchTable() const { return m_table; }

Q_SIGNALS:
    /** A mismatch in the list was activated (double-click): its flat index. */
    void elementActivated(qint64 flat);

private:
    void recompute();
    void rebuildHeatmap();
    void fillTable();
    const void *bData() const;
    DType bType() const;

    std::shared_ptr<const HostBuffer> m_a;
    std::shared_ptr<const HostBuffer> m_b;
    std::shared_ptr<const QByteArray> m_previous;
    std::shared_ptr<const QByteArray> m_mask; ///< showFailedCells()
    QString m_check;
    ErrorKind m_kind = ErrorKind::Absolute;
    double m_tolerance = 0;
    qint64 m_width1D = 0;
    qint64 m_slice = 0;
    DiffResult m_result;
    QString m_problem;

    QComboBox *m_kindBox;
    QLineEdit *m_toleranceEdit;
    QLabel *m_summary;
    ImageView *m_heatmap;
    QTableWidget *m_table;
};

} // namespace Kp

#include "diffview.h"

#include "buffergridmodel.h"
#include "imageview.h"
#include "run/runner.h"

#include <QComboBox>
#include <QDoubleValidator>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace Kp {

double componentError(double a, double b, ErrorKind kind)
{
    if (a == b) {
        return 0; // equal infinities too
    }
    const bool nanA = std::isnan(a);
    const bool nanB = std::isnan(b);
    if (nanA || nanB) {
        return nanA && nanB ? 0 : std::numeric_limits<double>::infinity();
    }
    const double d = std::fabs(a - b);
    if (kind == ErrorKind::Absolute || std::isinf(d)) {
        return d;
    }
    return d / std::max(std::fabs(a), std::fabs(b));
}

namespace {

template<typename LoadA, typename LoadB>
void compareLoop(const char *a, qint64 bytesA, const char *b, qint64 bytesB, qint64 n, int comps, ErrorKind kind,
                 double tolerance, int maxListed, DiffResult &r, LoadA loadA, LoadB loadB)
{
    for (qint64 i = 0; i < n; ++i) {
        double worst = 0;
        int worstComponent = -1;
        for (int c = 0; c < comps; ++c) {
            const qint64 k = i * comps + c;
            const double va = loadA(a + k * bytesA);
            const double vb = loadB(b + k * bytesB);
            if (va == vb) {
                continue; // the common case, kept cheap
            }
            const double e = componentError(va, vb, kind);
            if (e == 0) {
                continue;
            }
            if (std::isinf(e)) {
                r.infiniteError = true;
            } else {
                r.maxError = std::max(r.maxError, e);
            }
            if (worstComponent < 0 || e > worst) {
                worst = e;
                worstComponent = c;
            }
        }
        if (worstComponent < 0 || !(worst > tolerance)) {
            continue;
        }
        ++r.mismatchCount;
        if (r.first.size() < maxListed) {
            const qint64 k = i * comps + worstComponent;
            DiffMismatch m;
            m.index = i;
            m.component = worstComponent;
            m.a = loadA(a + k * bytesA);
            m.b = loadB(b + k * bytesB);
            m.absError = componentError(m.a, m.b, ErrorKind::Absolute);
            m.relError = componentError(m.a, m.b, ErrorKind::Relative);
            r.first.append(m);
        }
    }
}

double loadFloat(const char *p)
{
    float f;
    std::memcpy(&f, p, 4);
    return f;
}

/** The text of a pixel: one element, or the 4 elements of an RGBA [h, w, 4] pixel. */
QString pixelText(DType dtype, const char *p, qint64 elementsPerPixel)
{
    if (elementsPerPixel == 1) {
        return exactElementText(dtype, p);
    }
    const int eb = dtypeInfo(dtype).elementBytes();
    QStringList parts;
    for (qint64 e = 0; e < elementsPerPixel; ++e) {
        parts << exactElementText(dtype, p + e * eb);
    }
    return QStringLiteral("(") + parts.join(QStringLiteral(", ")) + QLatin1Char(')');
}

/** The per-pixel error of a against b, computed when painted: nothing is stored. */
class DiffImageSource : public ImageSource
{
public:
    DiffImageSource(std::shared_ptr<const HostBuffer> a, const void *b, DType bType, std::shared_ptr<const void> keepB,
                    qint64 width1D, qint64 slice, ErrorKind kind, double maxError)
        : m_a(std::move(a))
        , m_b(static_cast<const char *>(b))
        , m_keepB(std::move(keepB))
        , m_aType(m_a->spec.dtype)
        , m_bType(bType)
        , m_kind(kind)
        , m_maxError(maxError)
    {
        m_inner = ImageGeometry::of(*m_a, width1D, slice);
        m_geometry = m_inner;
        m_geometry.components = 1;
        m_geometry.kind = PixelKind::Scalar;
        m_compA = dtypeInfo(m_aType).component;
        m_compB = dtypeInfo(m_bType).component;
        m_bytesA = dtypeInfo(m_compA).componentBytes;
        m_bytesB = dtypeInfo(m_compB).componentBytes;
    }

    const ImageGeometry &geometry() const override { return m_geometry; }

    void read(qint64 y, const qint64 *xs, qsizetype n, float *out) const override
    {
        const char *a = static_cast<const char *>(m_a->memory.data());
        const int comps = m_inner.components;
        for (qsizetype i = 0; i < n; ++i) {
            const qint64 first = m_inner.pixelIndex(xs[i], y) * comps;
            double worst = 0;
            for (int c = 0; c < comps; ++c) {
                const double va = loadComponent(m_compA, a + (first + c) * m_bytesA);
                const double vb = loadComponent(m_compB, m_b + (first + c) * m_bytesB);
                worst = std::max(worst, componentError(va, vb, m_kind));
            }
            out[i] = static_cast<float>(worst);
        }
    }

    std::pair<double, double> finiteRange(int) const override { return {0, m_maxError}; }

    QString valueText(qint64 x, qint64 y) const override
    {
        const qint64 pixel = m_inner.pixelIndex(x, y);
        const char *a = static_cast<const char *>(m_a->memory.data());
        const qint64 ea = dtypeInfo(m_aType).elementBytes() * m_inner.elementsPerPixel;
        const qint64 eb = dtypeInfo(m_bType).elementBytes() * m_inner.elementsPerPixel;
        double absError = 0;
        double relError = 0;
        const int comps = m_inner.components;
        for (int c = 0; c < comps; ++c) {
            const double va = loadComponent(m_compA, a + (pixel * comps + c) * m_bytesA);
            const double vb = loadComponent(m_compB, m_b + (pixel * comps + c) * m_bytesB);
            absError = std::max(absError, componentError(va, vb, ErrorKind::Absolute));
            relError = std::max(relError, componentError(va, vb, ErrorKind::Relative));
        }
        return QStringLiteral("a %1, b %2, |a-b| %3, relative %4")
            .arg(pixelText(m_aType, a + pixel * ea, m_inner.elementsPerPixel),
                 pixelText(m_bType, m_b + pixel * eb, m_inner.elementsPerPixel))
            .arg(absError, 0, 'g', 6)
            .arg(relError, 0, 'g', 6);
    }

    QStringList cellText(qint64 x, qint64 y) const override
    {
        float e = 0;
        read(y, &x, 1, &e);
        return {QString::number(e, 'g', 3)};
    }

private:
    std::shared_ptr<const HostBuffer> m_a;
    const char *m_b;
    std::shared_ptr<const void> m_keepB;
    DType m_aType;
    DType m_bType;
    DType m_compA = DType::Float32;
    DType m_compB = DType::Float32;
    qint64 m_bytesA = 4;
    qint64 m_bytesB = 4;
    ErrorKind m_kind;
    double m_maxError;
    ImageGeometry m_inner;
    ImageGeometry m_geometry;
};

/** A check's failing cells as an image: 1 where an element failed, 0 elsewhere (max over an RGBA pixel). */
class MaskImageSource : public ImageSource
{
public:
    MaskImageSource(std::shared_ptr<const HostBuffer> a, std::shared_ptr<const QByteArray> mask, qint64 width1D,
                    qint64 slice)
        : m_a(std::move(a))
        , m_mask(std::move(mask))
    {
        m_inner = ImageGeometry::of(*m_a, width1D, slice);
        m_geometry = m_inner;
        m_geometry.components = 1;
        m_geometry.kind = PixelKind::Scalar;
    }

    const ImageGeometry &geometry() const override { return m_geometry; }

    void read(qint64 y, const qint64 *xs, qsizetype n, float *out) const override
    {
        for (qsizetype i = 0; i < n; ++i) {
            out[i] = failed(m_inner.pixelIndex(xs[i], y)) ? 1.0f : 0.0f;
        }
    }

    std::pair<double, double> finiteRange(int) const override { return {0, 1}; }

    QString valueText(qint64 x, qint64 y) const override
    {
        const qint64 pixel = m_inner.pixelIndex(x, y);
        const char *a = static_cast<const char *>(m_a->memory.data());
        const qint64 ea = dtypeInfo(m_a->spec.dtype).elementBytes() * m_inner.elementsPerPixel;
        return QStringLiteral("%1 %2").arg(pixelText(m_a->spec.dtype, a + pixel * ea, m_inner.elementsPerPixel),
                                           failed(pixel) ? QObject::tr("fails the check") : QObject::tr("passes"));
    }

    QStringList cellText(qint64 x, qint64 y) const override
    {
        return {failed(m_inner.pixelIndex(x, y)) ? QStringLiteral("✗") : QString()};
    }

private:
    bool failed(qint64 pixel) const
    {
        for (qint64 e = 0; e < m_inner.elementsPerPixel; ++e) {
            const qint64 k = pixel * m_inner.elementsPerPixel + e;
            if (k >= 0 && k < m_mask->size() && m_mask->at(qsizetype(k)) != 0) {
                return true;
            }
        }
        return false;
    }

    std::shared_ptr<const HostBuffer> m_a;
    std::shared_ptr<const QByteArray> m_mask;
    ImageGeometry m_inner;
    ImageGeometry m_geometry;
};

QString shapeText(const QList<qint64> &shape)
{
    QStringList parts;
    for (qint64 e : shape) {
        parts << QString::number(e);
    }
    return QStringLiteral("[") + parts.join(QStringLiteral(", ")) + QLatin1Char(']');
}

} // namespace

DiffResult compareElements(DType typeA, const void *a, DType typeB, const void *b, qint64 elements, ErrorKind kind,
                           double tolerance, int maxListed)
{
    DiffResult r;
    const DTypeInfo &ia = dtypeInfo(typeA);
    const DTypeInfo &ib = dtypeInfo(typeB);
    if (!a || !b || elements <= 0 || ia.components != ib.components) {
        return r;
    }
    r.compared = elements;
    const char *pa = static_cast<const char *>(a);
    const char *pb = static_cast<const char *>(b);
    if (ia.component == DType::Float32 && ib.component == DType::Float32) {
        compareLoop(pa, 4, pb, 4, elements, ia.components, kind, tolerance, maxListed, r, loadFloat, loadFloat);
    } else {
        const DType ca = ia.component;
        const DType cb = ib.component;
        compareLoop(
            pa, ia.componentBytes, pb, ib.componentBytes, elements, ia.components, kind, tolerance, maxListed, r,
            [ca](const char *p) { return loadComponent(ca, p); }, [cb](const char *p) { return loadComponent(cb, p); });
    }
    return r;
}

DiffView::DiffView(QWidget *parent)
    : QWidget(parent)
{
    m_kindBox = new QComboBox(this);
    m_kindBox->setObjectName(QStringLiteral("errorKind"));
    m_kindBox->addItem(tr("Absolute |a-b|"));
    m_kindBox->addItem(tr("Relative |a-b| / max(|a|, |b|)"));
    m_toleranceEdit = new QLineEdit(QStringLiteral("0"), this);
    m_toleranceEdit->setObjectName(QStringLiteral("tolerance"));
    auto *validator = new QDoubleValidator(0, std::numeric_limits<double>::max(), 17, m_toleranceEdit);
    validator->setNotation(QDoubleValidator::ScientificNotation);
    validator->setLocale(QLocale::c());
    m_toleranceEdit->setValidator(validator);
    m_toleranceEdit->setMaximumWidth(110);
    // The combo box and the summary must not set the inspector's width: long
    // entries and summaries are elided or wrapped, so the editor keeps its room.
    m_kindBox->setMinimumContentsLength(10);
    m_kindBox->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("diffSummary"));
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);

    m_heatmap = new ImageView(this);
    m_heatmap->setObjectName(QStringLiteral("heatmap"));
    m_heatmap->setReduceByMax(true);
    m_table = new QTableWidget(0, 5, this);
    m_table->setObjectName(QStringLiteral("mismatches"));
    m_table->setHorizontalHeaderLabels({tr("index"), tr("a"), tr("b"), tr("|a-b|"), tr("relative")});
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    m_table->horizontalHeader()->setStretchLastSection(true);

    auto *controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Error"), this));
    controls->addWidget(m_kindBox);
    controls->addWidget(new QLabel(tr("Tolerance"), this));
    controls->addWidget(m_toleranceEdit);
    controls->addWidget(m_summary, 1);
    auto *split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(m_heatmap);
    split->addWidget(m_table);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(controls);
    layout->addWidget(split, 1);

    connect(m_kindBox, &QComboBox::currentIndexChanged, this,
            [this](int i) { setErrorKind(i == 1 ? ErrorKind::Relative : ErrorKind::Absolute); });
    connect(m_toleranceEdit, &QLineEdit::editingFinished, this, [this] {
        bool ok = false;
        const double t = QLocale::c().toDouble(m_toleranceEdit->text(), &ok);
        if (ok) {
            setTolerance(t);
        }
    });
    connect(m_table, &QTableWidget::cellDoubleClicked, this, [this](int row, int) {
        if (row >= 0 && row < m_result.first.size()) {
            Q_EMIT elementActivated(m_result.first[row].index);
        }
    });
    clear();
}

DiffView::~DiffView() = default;

void DiffView::compare(std::shared_ptr<const HostBuffer> a, std::shared_ptr<const HostBuffer> b)
{
    m_a = std::move(a);
    m_b = std::move(b);
    m_previous.reset();
    m_mask.reset();
    recompute();
}

void DiffView::compareWithSnapshot(std::shared_ptr<const HostBuffer> a, std::shared_ptr<const QByteArray> previous)
{
    m_a = std::move(a);
    m_b.reset();
    m_previous = std::move(previous);
    m_mask.reset();
    recompute();
}

void DiffView::showFailedCells(std::shared_ptr<const HostBuffer> a, std::shared_ptr<const QByteArray> mask,
                               const QString &check)
{
    m_a = std::move(a);
    m_b.reset();
    m_previous.reset();
    m_mask = std::move(mask);
    m_check = check;
    recompute();
}

void DiffView::clear(const QString &reason)
{
    m_a.reset();
    m_b.reset();
    m_previous.reset();
    m_mask.reset();
    m_result = {};
    m_problem = reason.isEmpty() ? tr("Nothing to compare") : reason;
    m_heatmap->setSource(nullptr);
    fillTable();
}

void DiffView::setErrorKind(ErrorKind kind)
{
    if (kind == m_kind) {
        return;
    }
    m_kind = kind;
    const QSignalBlocker block(m_kindBox);
    m_kindBox->setCurrentIndex(kind == ErrorKind::Relative ? 1 : 0);
    recompute();
}

void DiffView::setTolerance(double tolerance)
{
    tolerance = std::max(0.0, tolerance);
    if (tolerance == m_tolerance) {
        return;
    }
    m_tolerance = tolerance;
    m_toleranceEdit->setText(QString::number(tolerance, 'g', 17));
    recompute();
}

void DiffView::setWidth1D(qint64 width)
{
    if (width != m_width1D) {
        m_width1D = width;
        rebuildHeatmap();
    }
}

void DiffView::setSlice(qint64 z)
{
    if (z != m_slice) {
        m_slice = z;
        rebuildHeatmap();
    }
}

void DiffView::refresh()
{
    recompute();
}

const void *DiffView::bData() const
{
    if (m_b) {
        return m_b->memory.data();
    }
    return m_previous ? m_previous->constData() : nullptr;
}

DType DiffView::bType() const
{
    return m_b ? m_b->spec.dtype : (m_a ? m_a->spec.dtype : DType::Float32);
}

void DiffView::recompute()
{
    m_result = {};
    m_problem.clear();
    if (!m_a) {
        m_problem = tr("Nothing to compare");
    } else if (!m_a->memory.isValid() || m_a->memory.size() < m_a->byteSize()) {
        m_problem = tr("%1 has no contents").arg(m_a->spec.name);
    } else if (m_b) {
        if (m_b->shape != m_a->shape) {
            m_problem = tr("%1 %2 and %3 %4 differ in shape")
                            .arg(m_a->spec.name, shapeText(m_a->shape), m_b->spec.name, shapeText(m_b->shape));
        } else if (dtypeInfo(m_a->spec.dtype).components != dtypeInfo(m_b->spec.dtype).components) {
            m_problem =
                tr("%1 (%2) and %3 (%4) have different numbers of components")
                    .arg(m_a->spec.name, dtypeName(m_a->spec.dtype), m_b->spec.name, dtypeName(m_b->spec.dtype));
        } else if (!m_b->memory.isValid() || m_b->memory.size() < m_b->byteSize()) {
            m_problem = tr("%1 has no contents").arg(m_b->spec.name);
        }
    } else if (m_mask) {
        if (m_mask->size() != m_a->elementCount()) {
            m_problem =
                tr("The failing cells of %1 are from another size of %2: run again").arg(m_check, m_a->spec.name);
        }
    } else if (!m_previous || m_previous->size() != m_a->byteSize()) {
        m_problem = tr("No copy of %1 from before the run (run once, or it is larger than the snapshot limit)")
                        .arg(m_a->spec.name);
    }
    if (m_problem.isEmpty() && m_mask) {
        m_result.compared = m_a->elementCount();
        const char *mask = m_mask->constData();
        for (qint64 i = 0; i < m_result.compared; ++i) {
            if (mask[i] != 0) {
                ++m_result.mismatchCount;
                if (m_result.first.size() < kMaxListed) {
                    DiffMismatch m;
                    m.index = i;
                    m_result.first.append(m);
                }
            }
        }
        m_result.maxError = 1;
    } else if (m_problem.isEmpty()) {
        m_result = compareElements(m_a->spec.dtype, m_a->memory.data(), bType(), bData(), m_a->elementCount(), m_kind,
                                   m_tolerance, kMaxListed);
    }
    rebuildHeatmap();
    fillTable();
}

void DiffView::rebuildHeatmap()
{
    if (!m_problem.isEmpty() || !m_a) {
        m_heatmap->setSource(nullptr);
        return;
    }
    if (m_mask) {
        m_heatmap->setSource(std::make_shared<MaskImageSource>(m_a, m_mask, m_width1D, m_slice));
        return;
    }
    std::shared_ptr<const void> keep = m_b ? std::shared_ptr<const void>(m_b) : std::shared_ptr<const void>(m_previous);
    // An all-equal pair still gets a visible scale (everything at its low end).
    const double top = m_result.maxError > 0 ? m_result.maxError : 1;
    m_heatmap->setSource(
        std::make_shared<DiffImageSource>(m_a, bData(), bType(), std::move(keep), m_width1D, m_slice, m_kind, top));
}

QString DiffView::summary() const
{
    if (!m_problem.isEmpty()) {
        return m_problem;
    }
    if (m_mask) {
        QString s = tr("%1 of %2 elements of %3 fail the check %4 (bright cells)")
                        .arg(m_result.mismatchCount)
                        .arg(m_result.compared)
                        .arg(m_a->spec.name, m_check);
        if (m_result.mismatchCount > m_result.first.size()) {
            s += tr("; the first %1 are listed").arg(m_result.first.size());
        }
        return s;
    }
    const QString what = m_kind == ErrorKind::Absolute ? QStringLiteral("|a-b|") : tr("relative error");
    QString s = tr("%1 of %2 elements differ (%3 > %4)")
                    .arg(m_result.mismatchCount)
                    .arg(m_result.compared)
                    .arg(what)
                    .arg(m_tolerance, 0, 'g', 6);
    if (m_result.infiniteError) {
        s += tr("; largest %1 inf (NaN or Inf on one side)").arg(what);
    } else if (m_result.mismatchCount > 0 || m_result.maxError > 0) {
        s += tr("; largest %1 %2").arg(what).arg(m_result.maxError, 0, 'g', 6);
    }
    if (m_result.mismatchCount > m_result.first.size()) {
        s += tr("; the first %1 are listed").arg(m_result.first.size());
    }
    return s;
}

void DiffView::fillTable()
{
    m_summary->setText(summary());
    m_table->setRowCount(0);
    // A check's failing cells have no error kind or tolerance of this view's: the check applied its own.
    m_kindBox->setEnabled(!m_mask);
    m_toleranceEdit->setEnabled(!m_mask);
    const QStringList headers = m_mask ? QStringList{tr("index"), m_a ? m_a->spec.name : tr("value"), tr("check")}
                                       : QStringList{tr("index"), tr("a"), tr("b"), tr("|a-b|"), tr("relative")};
    m_table->setColumnCount(int(headers.size()));
    m_table->setHorizontalHeaderLabels(headers);
    if (!m_problem.isEmpty() || !m_a) {
        return;
    }
    m_table->setRowCount(int(m_result.first.size()));
    if (m_mask) {
        // The check's own report has got and expected; here, where its failing cells are.
        const DType ta = m_a->spec.dtype;
        const int ea = dtypeInfo(ta).elementBytes();
        const char *a = static_cast<const char *>(m_a->memory.data());
        for (int row = 0; row < m_result.first.size(); ++row) {
            const qint64 i = m_result.first[row].index;
            const QStringList cells{QString::number(i), exactElementText(ta, a + i * ea), tr("fails")};
            for (int c = 0; c < cells.size(); ++c) {
                auto *item = new QTableWidgetItem(cells[c]);
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
                m_table->setItem(row, c, item);
            }
        }
        return;
    }
    const DType ta = m_a->spec.dtype;
    const DType tb = bType();
    const int ea = dtypeInfo(ta).elementBytes();
    const int eb = dtypeInfo(tb).elementBytes();
    const char *a = static_cast<const char *>(m_a->memory.data());
    const char *b = static_cast<const char *>(bData());
    for (int row = 0; row < m_result.first.size(); ++row) {
        const DiffMismatch &m = m_result.first[row];
        const QStringList cells{QString::number(m.index), exactElementText(ta, a + m.index * ea),
                                exactElementText(tb, b + m.index * eb), QString::number(m.absError, 'g', 6),
                                QString::number(m.relError, 'g', 6)};
        for (int c = 0; c < cells.size(); ++c) {
            auto *item = new QTableWidgetItem(cells[c]);
            item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            m_table->setItem(row, c, item);
        }
    }
}

} // namespace Kp

#include "presetgallery.h"

#include "workbench/projectdocument.h"
#include "workbench/runcontroller.h"
#include "workbench/workbench.h"

#include "buffers/colormap.h"
#include "buffers/imagesource.h"
#include "core/safefile.h"
#include "project/projectio.h"
#include "run/runner.h"

#include <QBuffer>
#include <QDialogButtonBox>
#include <QDir>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QPainterPath>
#include <QPushButton>
#include <QStandardPaths>
#include <QStyledItemDelegate>
#include <QTextBlock>
#include <QTextDocument>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <vector>

namespace Kp {

namespace {

constexpr int kPathRole = Qt::UserRole + 1;
constexpr int kSummaryRole = Qt::UserRole + 2;
constexpr int kErrorRole = Qt::UserRole + 3;

/** Markdown to plain text, first paragraph after a leading heading. */
QString firstParagraph(const QString &markdown)
{
    QTextDocument doc;
    doc.setMarkdown(markdown);
    const QStringList blocks = doc.toPlainText().split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    // The first block of most descriptions repeats the title as a heading.
    for (qsizetype i = 0; i < blocks.size(); ++i) {
        if (i == 0 && blocks.size() > 1 && doc.firstBlock().blockFormat().headingLevel() > 0) {
            continue;
        }
        return blocks[i].simplified();
    }
    return QString();
}

/** Paints a card: the thumbnail, the title, and the summary elided to what fits. */
class CardDelegate : public QStyledItemDelegate
{
public:
    using QStyledItemDelegate::QStyledItemDelegate;

    QSize sizeHint(const QStyleOptionViewItem &, const QModelIndex &) const override
    {
        return {PresetGallery::kThumbWidth + 24, PresetGallery::kThumbHeight + 110};
    }

    void paint(QPainter *p, const QStyleOptionViewItem &option, const QModelIndex &index) const override
    {
        p->save();
        p->setRenderHint(QPainter::Antialiasing);
        const QRectF card = QRectF(option.rect).adjusted(5, 5, -5, -5);
        const QPalette &pal = option.palette;
        const bool selected = option.state & QStyle::State_Selected;
        const bool hover = option.state & QStyle::State_MouseOver;
        QPainterPath path;
        path.addRoundedRect(card, 8, 8);
        p->fillPath(path, pal.color(QPalette::Base));
        p->setPen(QPen(selected ? pal.color(QPalette::Highlight)
                       : hover  ? pal.color(QPalette::Mid)
                                : pal.color(QPalette::Midlight),
                       selected ? 2.5 : 1));
        p->drawPath(path);
        const QImage thumb = index.data(Qt::DecorationRole).value<QImage>();
        const QRectF thumbRect(card.left() + 7, card.top() + 7, card.width() - 14, PresetGallery::kThumbHeight);
        if (!thumb.isNull()) {
            QPainterPath clip;
            clip.addRoundedRect(thumbRect, 5, 5);
            p->setClipPath(clip);
            p->drawImage(thumbRect, thumb);
            p->setClipping(false);
        }
        QFont titleFont = option.font;
        titleFont.setBold(true);
        titleFont.setPointSizeF(titleFont.pointSizeF() * 1.1);
        p->setFont(titleFont);
        p->setPen(pal.color(QPalette::Text));
        const QRectF titleRect(card.left() + 9, thumbRect.bottom() + 6, card.width() - 18,
                               QFontMetricsF(titleFont).height());
        p->drawText(titleRect, Qt::AlignLeft | Qt::AlignVCenter,
                    // In the middle: "Matrix transpose through a padded tile" and "... shared memory"
                    // were both "Matrix transpose through…" elided at the end.
                    QFontMetricsF(titleFont).elidedText(index.data(Qt::DisplayRole).toString(), Qt::ElideMiddle,
                                                        titleRect.width()));
        p->setFont(option.font);
        const QString error = index.data(kErrorRole).toString();
        p->setPen(error.isEmpty() ? pal.color(QPalette::PlaceholderText) : QColor(0xd73a49));
        const QRectF textRect(card.left() + 9, titleRect.bottom() + 3, card.width() - 18,
                              card.bottom() - titleRect.bottom() - 8);
        // Whole lines only, the last one elided.
        const QString text = error.isEmpty() ? index.data(kSummaryRole).toString() : error;
        const QFontMetricsF fm(option.font);
        const int maxLines = std::max(1, int(textRect.height() / fm.lineSpacing()));
        QStringList lines;
        QString rest = text;
        while (!rest.isEmpty() && lines.size() < maxLines) {
            int fit = int(rest.size());
            while (fit > 0 && fm.horizontalAdvance(rest.left(fit)) > textRect.width()) {
                const int space = int(rest.lastIndexOf(QLatin1Char(' '), fit - 1));
                fit = space > 0 ? space : fit - 1;
            }
            fit = std::max(fit, 1);
            if (lines.size() == maxLines - 1 && fit < rest.size()) {
                lines << fm.elidedText(rest, Qt::ElideRight, textRect.width());
                break;
            }
            lines << rest.left(fit);
            rest = rest.mid(fit).trimmed();
        }
        qreal y = textRect.top();
        for (const QString &line : lines) {
            p->drawText(QPointF(textRect.left(), y + fm.ascent()), line);
            y += fm.lineSpacing();
        }
        if (option.state & QStyle::State_HasFocus) {
            p->setPen(QPen(pal.color(QPalette::Highlight), 1, Qt::DotLine));
            p->drawRoundedRect(card.adjusted(3, 3, -3, -3), 6, 6);
        }
        p->restore();
    }
};

} // namespace

QString thumbnailBufferOf(const Project &project)
{
    for (const BufferSpec &b : project.buffers) {
        const qsizetype dims = b.shape.size();
        const bool image = dims == 2 || (dims == 3 && b.shape[2] == 4);
        if (image && b.init.kind != BufferInit::Kind::Random) {
            return b.name;
        }
    }
    return QString();
}

QList<PresetInfo> listPresets(const QString &root)
{
    QList<PresetInfo> out;
    const QDir dir(root);
    const QStringList names = dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name);
    for (const QString &name : names) {
        const QString kpg = dir.filePath(QStringLiteral("%1/%1.kpg").arg(name));
        if (!QFileInfo::exists(kpg)) {
            continue;
        }
        PresetInfo info;
        info.name = name;
        info.path = kpg;
        info.title = name;
        const Result<Project> p = loadProject(kpg);
        if (!p) {
            info.error = p.error().message;
            out << info;
            continue;
        }
        if (!p->title.isEmpty()) {
            info.title = p->title;
        }
        info.description = p->description;
        info.summary = firstParagraph(p->description);
        info.kernel = p->launches.isEmpty() ? QString() : p->launches.first().kernel;
        QString shown = thumbnailBufferOf(*p);
        if (shown.isEmpty() && !p->buffers.isEmpty()) {
            shown = p->buffers.last().name; // vectors: the last is usually the output
        }
        if (const BufferSpec *b = p->buffer(shown)) {
            QStringList extents;
            for (qint64 e : b->shape) {
                extents << QString::number(e);
            }
            info.output =
                QStringLiteral("%1 %2 [%3]").arg(b->name, dtypeName(b->dtype), extents.join(QStringLiteral(", ")));
        }
        out << info;
    }
    // By title, as the cards read ("Game of Life" came first by its folder name).
    std::stable_sort(out.begin(), out.end(), [](const PresetInfo &a, const PresetInfo &b) {
        return QString::compare(a.title, b.title, Qt::CaseInsensitive) < 0;
    });
    return out;
}

QImage renderBufferThumbnail(const HostBuffer &buffer, const QSize &size)
{
    if (!buffer.memory.isValid() || buffer.memory.size() < buffer.byteSize() || size.isEmpty()) {
        return {};
    }
    // A source that does not own the buffer: it lives as long as this call.
    const std::shared_ptr<const HostBuffer> ref(&buffer, [](const HostBuffer *) {});
    const BufferImageSource source(ref, 0, 0);
    const ImageGeometry &g = source.geometry();
    if (g.isEmpty() || g.dims < 2) {
        return {};
    }
    const auto [lo, hi] = source.finiteRange(-1);
    const ColorMapper mapper(Colormap::Viridis, std::isfinite(lo) ? lo : 0, std::isfinite(hi) ? hi : 1);
    QImage img(size, QImage::Format_RGB32);
    img.fill(Qt::black);
    // Fit the whole image, centred, keeping its aspect.
    const double scale = std::min(double(size.width()) / double(g.width), double(size.height()) / double(g.height));
    const int w = std::max(1, int(g.width * scale));
    const int h = std::max(1, int(g.height * scale));
    const int x0 = (size.width() - w) / 2;
    const int y0 = (size.height() - h) / 2;
    std::vector<qint64> xs(static_cast<size_t>(w));
    for (int x = 0; x < w; ++x) {
        xs[size_t(x)] = std::min<qint64>(g.width - 1, qint64(x / scale));
    }
    std::vector<float> values(size_t(w) * size_t(g.components));
    for (int y = 0; y < h; ++y) {
        const qint64 sy = std::min<qint64>(g.height - 1, qint64(y / scale));
        const qint64 row = g.rowLength(sy);
        int n = 0;
        while (n < w && xs[size_t(n)] < row) {
            ++n;
        }
        source.read(sy, xs.data(), n, values.data());
        auto *line = reinterpret_cast<QRgb *>(img.scanLine(y0 + y));
        for (int x = 0; x < n; ++x) {
            const float *v = values.data() + size_t(x) * size_t(g.components);
            QRgb c;
            if (g.kind == PixelKind::Rgba8) {
                c = qRgb(int(v[0]), int(v[1 % g.components]), int(v[2 % g.components]));
            } else if (g.kind == PixelKind::RgbaFloat) {
                const auto to8 = [](float f) { return int(std::clamp(f, 0.0f, 1.0f) * 255.0f + 0.5f); };
                c = qRgb(to8(v[0]), to8(v[1 % g.components]), to8(v[2 % g.components]));
            } else {
                c = mapper.map(v[0]);
            }
            line[x0 + x] = c;
        }
    }
    return img;
}

QImage genericThumbnail(const PresetInfo &preset, const QSize &size)
{
    QImage img(size, QImage::Format_ARGB32_Premultiplied);
    QPainter p(&img);
    p.setRenderHint(QPainter::Antialiasing);
    // A colour of its own per preset, steady across runs.
    quint32 h = 2166136261u; // FNV-1a: neighbouring names get far-apart hues
    for (const QChar ch : preset.name) {
        h = (h ^ ch.unicode()) * 16777619u;
    }
    const int hue = int(h % 360);
    QLinearGradient bg(0, 0, size.width(), size.height());
    bg.setColorAt(0, QColor::fromHsv(hue, 120, 95));
    bg.setColorAt(1, QColor::fromHsv((hue + 40) % 360, 150, 45));
    p.fillRect(img.rect(), bg);
    // A grid of blocks of threads: what every kernel launches.
    const int cols = 6;
    const int rows = 3;
    const qreal cell = std::min(size.width() * 0.55 / cols, size.height() * 0.5 / rows);
    const QPointF origin(size.width() * 0.08, size.height() * 0.14);
    for (int r = 0; r < rows; ++r) {
        for (int c = 0; c < cols; ++c) {
            const QRectF block(origin.x() + c * cell, origin.y() + r * cell, cell - 3, cell - 3);
            p.setPen(Qt::NoPen);
            p.setBrush(QColor(255, 255, 255, (r * cols + c) % 5 == 0 ? 190 : 70));
            p.drawRoundedRect(block, 2, 2);
        }
    }
    QFont f;
    f.setPixelSize(std::max(9, size.height() / 9));
    f.setBold(true);
    p.setFont(f);
    p.setPen(Qt::white);
    const QRectF text(size.width() * 0.08, size.height() * 0.62, size.width() * 0.86, size.height() * 0.36);
    const QFontMetricsF fm(f);
    p.drawText(QPointF(text.left(), text.top() + fm.ascent()),
               fm.elidedText(preset.kernel.isEmpty() ? preset.name : preset.kernel + QStringLiteral("<<<…>>>"),
                             Qt::ElideRight, text.width()));
    f.setBold(false);
    f.setPixelSize(std::max(8, size.height() / 11));
    p.setFont(f);
    p.setPen(QColor(255, 255, 255, 200));
    const QFontMetricsF fm2(f);
    p.drawText(QPointF(text.left(), text.top() + fm.lineSpacing() + fm2.ascent()),
               fm2.elidedText(preset.output, Qt::ElideRight, text.width()));
    return img;
}

QString thumbnailCachePath(const QString &presetName)
{
    return QStandardPaths::writableLocation(QStandardPaths::CacheLocation) +
           QStringLiteral("/thumbnails/%1.png").arg(presetName);
}

bool storeThumbnail(const QString &presetName, const QImage &image)
{
    if (image.isNull() || presetName.contains(QLatin1Char('/')) || presetName.startsWith(QLatin1Char('.'))) {
        return false;
    }
    const QString path = thumbnailCachePath(presetName);
    if (!QDir().mkpath(QFileInfo(path).path())) {
        return false;
    }
    QByteArray bytes;
    QBuffer buf(&bytes);
    buf.open(QIODevice::WriteOnly);
    if (!image.save(&buf, "PNG")) {
        return false;
    }
    return bool(writeOutput(path, bytes, QStringLiteral("a thumbnail")));
}

QImage presetThumbnail(const PresetInfo &preset, const QSize &size)
{
    const Result<QByteArray> bytes =
        readRegularFile(thumbnailCachePath(preset.name), 4 * 1024 * 1024, QStringLiteral("a thumbnail"));
    if (bytes) {
        QImage img;
        if (img.loadFromData(*bytes, "PNG") && !img.isNull()) {
            return img.scaled(size, Qt::KeepAspectRatioByExpanding, Qt::SmoothTransformation);
        }
    }
    return genericThumbnail(preset, size);
}

PresetGallery::PresetGallery(QWidget *parent)
    : QListWidget(parent)
{
    setObjectName(QStringLiteral("presetGallery"));
    setViewMode(QListView::IconMode);
    setResizeMode(QListView::Adjust);
    setMovement(QListView::Static);
    setWrapping(true);
    setUniformItemSizes(true);
    setSpacing(4);
    setMouseTracking(true);
    setSelectionMode(QAbstractItemView::SingleSelection);
    setItemDelegate(new CardDelegate(this));
    setFrameShape(QFrame::NoFrame);
    connect(this, &QListWidget::itemActivated, this,
            [this](QListWidgetItem *item) { Q_EMIT presetActivated(item->data(kPathRole).toString()); });
    reload();
}

void PresetGallery::reload(const QString &root)
{
    clear();
    m_presets = listPresets(root);
    for (const PresetInfo &p : m_presets) {
        auto *item = new QListWidgetItem(p.title, this);
        item->setData(kPathRole, p.path);
        item->setData(kSummaryRole, p.summary);
        item->setData(kErrorRole, p.error.isEmpty() ? QString() : tr("Cannot be read: %1").arg(p.error));
        item->setData(Qt::DecorationRole, presetThumbnail(p, {kThumbWidth, kThumbHeight}));
        item->setToolTip(p.description.isEmpty() ? p.path : p.description);
        item->setData(Qt::AccessibleTextRole, p.title);
        item->setData(Qt::AccessibleDescriptionRole, p.summary);
    }
    if (count() > 0) {
        setCurrentRow(0);
    }
}

QString PresetGallery::currentPresetPath() const
{
    const QListWidgetItem *item = currentItem();
    return item ? item->data(kPathRole).toString() : QString();
}

int PresetGallery::setFilter(const QString &text)
{
    const QStringList words = text.simplified().split(QLatin1Char(' '), Qt::SkipEmptyParts);
    const auto matches = [&words](const QString &hay) {
        for (const QString &w : words) {
            if (!hay.contains(w, Qt::CaseInsensitive)) {
                return false;
            }
        }
        return true;
    };
    // Names first (title, kernel, folder); the descriptions only when no name
    // matches: they mention their neighbours ("compare with transpose_padded").
    const int n = int(std::min<qsizetype>(count(), m_presets.size()));
    QList<bool> shown(n, false);
    bool any = false;
    for (int row = 0; row < n; ++row) {
        const PresetInfo &p = m_presets[row];
        shown[row] = matches(QStringList{p.title, p.kernel, p.name}.join(QLatin1Char('\n')));
        any = any || shown[row];
    }
    if (!any) {
        for (int row = 0; row < n; ++row) {
            shown[row] = matches(m_presets[row].description);
        }
    }
    int visible = 0;
    QListWidgetItem *first = nullptr;
    for (int row = 0; row < n; ++row) {
        item(row)->setHidden(!shown[row]);
        if (shown[row]) {
            ++visible;
            first = first ? first : item(row);
        }
    }
    if (first && (!currentItem() || currentItem()->isHidden())) {
        setCurrentItem(first);
    }
    return visible;
}

namespace {

/** The search above a gallery: it narrows the cards; Enter opens the current one, Down moves into the cards. */
QLineEdit *searchFor(PresetGallery *gallery, QWidget *parent)
{
    auto *search = new QLineEdit(parent);
    search->setObjectName(QStringLiteral("presetSearch"));
    search->setPlaceholderText(QObject::tr("Search presets"));
    search->setToolTip(QObject::tr("Narrows the cards by title, kernel or folder name, else by description"));
    search->setClearButtonEnabled(true);
    QObject::connect(search, &QLineEdit::textChanged, gallery, [gallery](const QString &t) { gallery->setFilter(t); });
    QObject::connect(search, &QLineEdit::returnPressed, gallery, [gallery] {
        if (QListWidgetItem *item = gallery->currentItem(); item && !item->isHidden()) {
            Q_EMIT gallery->itemActivated(item);
        }
    });
    return search;
}

} // namespace

StartPage::StartPage(QWidget *parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("startPage"));
    auto *title = new QLabel(tr("<h1>Kernel Playground</h1>"), this);
    auto *intro = new QLabel(tr("Write CUDA C kernels and run them visually. Start from a preset (a template with "
                                "buffers, launches and checks set up), or from an empty project. Arrow keys choose a "
                                "card, Enter opens it."),
                             this);
    intro->setWordWrap(true);
    auto *newButton = new QPushButton(tr("&New Project"), this);
    newButton->setToolTip(tr("An empty project: one kernel stub, no buffers, steps or checks. The presets below "
                             "are the templates."));
    auto *openButton = new QPushButton(tr("&Open…"), this);
    auto *buttons = new QHBoxLayout;
    buttons->addWidget(newButton);
    buttons->addWidget(openButton);
    buttons->addStretch(1);
    auto *presetsLabel = new QLabel(tr("<h3>Presets</h3>"), this);
    m_presetsRow = new QHBoxLayout;
    m_presetsRow->addWidget(presetsLabel);
    m_presetsRow->addStretch(1);
    m_layout = new QVBoxLayout(this);
    m_layout->setContentsMargins(12, 12, 12, 12); // the window fits 1024 px beside the side docks
    m_layout->addWidget(title);
    m_layout->addWidget(intro);
    m_layout->addLayout(buttons);
    m_layout->addLayout(m_presetsRow);
    connect(newButton, &QPushButton::clicked, this, &StartPage::newRequested);
    connect(openButton, &QPushButton::clicked, this, &StartPage::openRequested);
}

PresetGallery *StartPage::gallery()
{
    if (!m_gallery) {
        m_gallery = new PresetGallery(this);
        m_search = searchFor(m_gallery, this);
        m_presetsRow->addWidget(m_search, 1);
        m_layout->addWidget(m_gallery, 1);
        setFocusProxy(m_gallery);
        connect(m_gallery, &PresetGallery::presetActivated, this, &StartPage::presetActivated);
    }
    return m_gallery;
}

QLineEdit *StartPage::searchField()
{
    gallery();
    return m_search;
}

void StartPage::showEvent(QShowEvent *event)
{
    gallery();
    QWidget::showEvent(event);
}

PresetDialog::PresetDialog(QWidget *parent)
    : QDialog(parent)
{
    setObjectName(QStringLiteral("presetDialog"));
    setWindowTitle(tr("New from Preset"));
    m_gallery = new PresetGallery(this);
    m_search = searchFor(m_gallery, this);
    auto *box = new QDialogButtonBox(QDialogButtonBox::Open | QDialogButtonBox::Cancel, this);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_search);
    layout->addWidget(m_gallery, 1);
    layout->addWidget(box);
    resize(3 * (PresetGallery::kThumbWidth + 32) + 60, 2 * (PresetGallery::kThumbHeight + 110) + 90);
    const auto choose = [this](const QString &path) {
        m_chosen = path;
        if (!m_chosen.isEmpty()) {
            accept();
        }
    };
    connect(m_gallery, &PresetGallery::presetActivated, this, choose);
    connect(box, &QDialogButtonBox::accepted, this, [this, choose] { choose(m_gallery->currentPresetPath()); });
    connect(box, &QDialogButtonBox::rejected, this, &QDialog::reject);
    m_gallery->setFocus();
}

StartPage::StartPage(Workbench &wb, QWidget *parent)
    : StartPage(parent)
{
    connect(&wb, &Workbench::runFinished, this, [&wb](const RunResult &r, RunKind kind) {
        const Project &p = wb.runs().lastRunProject();
        if (kind == RunKind::Frame || r.error || !p.path.startsWith(QLatin1String(":/presets/"))) {
            return;
        }
        // A preset's own output image becomes its card's thumbnail.
        const QString preset = QFileInfo(p.path).dir().dirName();
        if (const HostBuffer *b = wb.document().hostBuffers().find(thumbnailBufferOf(p))) {
            storeThumbnail(preset,
                           renderBufferThumbnail(*b, {PresetGallery::kThumbWidth, PresetGallery::kThumbHeight}));
        }
    });
}

} // namespace Kp

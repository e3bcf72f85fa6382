#include "bufferspanel.h"

#include "workbench/workbench.h"

#include "buffers/bufferexport.h"
#include "buffers/bufferinit.h"
#include "buffers/npy.h"
#include "core/safefile.h"
#include "initeditor.h"
#include "project/bufferjson.h"
#include "run/runner.h"
#include "workbench/exercise.h"
#include "workbench/fieldplace.h"
#include "workbench/projectdocument.h"

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollBar>
#include <QStyledItemDelegate>
#include <QTableWidget>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace Kp {

namespace {

/**
 * A file an init reads (an image, an .npy), brought into the project: a file
 * outside a saved project's folder is copied into it (under its name, or
 * NAME-2.EXT when another file has that name) and named relative to it, so
 * the project keeps it and `kpg check`, which reads only files inside the
 * project's folder, does not refuse the project later. *note says what was
 * done, or why the file stays where it is (an unsaved project).
 */
QJsonObject adoptFile(const ProjectDocument *doc, QJsonObject init, QString *note)
{
    const QString file = init.value(QStringLiteral("file")).toString();
    if (file.isEmpty() || QFileInfo(file).isRelative()) {
        return init;
    }
    if (doc->path().isEmpty()) {
        *note = QObject::tr("%1 is outside the project's folder, and the project is not saved yet: save it and "
                            "import the file again to keep a copy with the project (kpg check reads only files "
                            "inside the project's folder).")
                    .arg(file);
        return init;
    }
    const QDir dir(QFileInfo(doc->path()).absolutePath());
    const QString canonical = QFileInfo(file).canonicalFilePath();
    const QString root = dir.canonicalPath();
    if (!canonical.isEmpty() && canonical.startsWith(root + QLatin1Char('/'))) {
        init.insert(QStringLiteral("file"), dir.relativeFilePath(canonical));
        return init;
    }
    const QFileInfo info(file);
    QString name = info.fileName();
    for (int n = 2; QFileInfo::exists(dir.filePath(name)) && !sameContents(file, dir.filePath(name)); ++n) {
        name = info.completeBaseName() + QStringLiteral("-%1.").arg(n) + info.suffix();
    }
    if (!QFileInfo::exists(dir.filePath(name))) {
        if (const Status s =
                copyRegularFile(file, dir.filePath(name), kMaxNpyFileBytes, QObject::tr("the imported file"));
            !s) {
            *note = s.error().message;
            return init;
        }
    }
    *note = QObject::tr("Copied %1 into the project's folder as %2, so the project keeps it (kpg check reads only "
                        "files inside the project's folder).")
                .arg(file, name);
    init.insert(QStringLiteral("file"), name);
    return init;
}

/**
 * Sets key of buffer index together with what an image buffer needs to go
 * with it: the image mode's dtype (gray: float32, rgba8: uchar4, rgba:
 * float4, dropping a last dimension of 4 a vector dtype now carries), or the
 * dtype's mode (a scalar dtype: gray). Refused like any edit when that is
 * not enough, or when the buffer is no image.
 */
Status editImageTogether(ProjectDocument *doc, int index, const QString &key, const QJsonValue &v)
{
    if (index < 0 || index >= doc->project().buffers.size()) {
        return Unit{};
    }
    const BufferSpec &b = doc->project().buffers[index];
    const bool toImage =
        key == QLatin1String("init") && v.toObject().value(QStringLiteral("kind")).toString() == QLatin1String("image");
    const bool imageDtype = key == QLatin1String("dtype") && b.init.kind == BufferInit::Kind::Image;
    if (!toImage && !imageDtype) {
        return Error{QStringLiteral("project"), Error::Code::BadInput, {}, QStringLiteral("not an image")};
    }
    return doc->edit(QObject::tr("Set %1 of buffer %2").arg(key).arg(index + 1), [&](QJsonObject &o) {
        QJsonArray items = o.value(QStringLiteral("buffers")).toArray();
        QJsonObject item = items[index].toObject();
        item.insert(key, v);
        if (toImage) {
            const QString mode = v.toObject().value(QStringLiteral("mode")).toString(QStringLiteral("rgba8"));
            const QString dtype = mode == QLatin1String("gray")    ? QStringLiteral("float32")
                                  : mode == QLatin1String("rgba8") ? QStringLiteral("uchar4")
                                                                   : QStringLiteral("float4");
            item.insert(QStringLiteral("dtype"), dtype);
            QJsonArray shape = item.value(QStringLiteral("shape")).toArray();
            if (shape.size() == 3 && shape.last().toInt() == 4) {
                shape.removeLast(); // one pixel is one element now
                item.insert(QStringLiteral("shape"), shape);
            }
        } else {
            QJsonObject init = item.value(QStringLiteral("init")).toObject();
            const QString dtype = v.toString();
            init.insert(QStringLiteral("mode"), dtype == QLatin1String("uchar4")   ? QStringLiteral("rgba8")
                                                : dtype == QLatin1String("float4") ? QStringLiteral("rgba")
                                                                                   : QStringLiteral("gray"));
            item.insert(QStringLiteral("init"), init);
        }
        items[index] = item;
        o.insert(QStringLiteral("buffers"), items);
    });
}
enum Column { Name, DTypeCol, Shape, Init, Elements, Bytes, ColumnCount };

QString shapeText(const QList<qint64> &shape)
{
    QStringList parts;
    for (qint64 d : shape) {
        parts << QString::number(d);
    }
    return parts.join(QStringLiteral(", "));
}

/** A cell edited by choosing from a fixed list (dtypes): no typing, no typo. */
class ChoiceDelegate : public QStyledItemDelegate
{
public:
    ChoiceDelegate(QStringList choices, QObject *parent)
        : QStyledItemDelegate(parent)
        , m_choices(std::move(choices))
    {
    }
    QWidget *createEditor(QWidget *parent, const QStyleOptionViewItem &, const QModelIndex &) const override
    {
        auto *combo = new QComboBox(parent);
        combo->addItems(m_choices);
        // A choice is an edit: commit it at once, as a list's click would.
        connect(combo, &QComboBox::activated, combo, [this, combo] {
            auto *self = const_cast<ChoiceDelegate *>(this);
            Q_EMIT self->commitData(combo);
            Q_EMIT self->closeEditor(combo);
        });
        return combo;
    }
    void setEditorData(QWidget *editor, const QModelIndex &index) const override
    {
        static_cast<QComboBox *>(editor)->setCurrentText(index.data().toString());
    }
    void setModelData(QWidget *editor, QAbstractItemModel *model, const QModelIndex &index) const override
    {
        model->setData(index, static_cast<QComboBox *>(editor)->currentText());
    }

private:
    QStringList m_choices;
};

QStringList scalarTypeNames()
{
    QStringList out;
    for (const QString &n : dtypeNames()) {
        const auto t = dtypeFromName(n);
        if (t && dtypeInfo(*t).components == 1) {
            out << n;
        }
    }
    return out;
}
} // namespace

BuffersPanel::BuffersPanel(QWidget *parent)
    : QWidget(parent)
{
    auto *layout = new QVBoxLayout(this);
    auto *columns = new QHBoxLayout;
    columns->setSpacing(4);
    auto *left = new QVBoxLayout;
    columns->addLayout(left, 3);
    layout->addLayout(columns, 1);
    m_table = new QTableWidget(0, ColumnCount, this);
    m_table->setObjectName(QStringLiteral("buffers"));
    m_table->setHorizontalHeaderLabels(
        {tr("Name"), tr("DType"), tr("Shape"), tr("Initial contents"), tr("Elements"), tr("Bytes")});
    // Columns as wide as their contents, the last one taking what is left: a
    // stretched "Initial contents" was squeezed to "co…" when the others were wide.
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->verticalHeader()->hide();
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setWordWrap(false);
    m_table->setItemDelegateForColumn(DTypeCol, new ChoiceDelegate(dtypeNames(), this));
    // Room for a few buffers before scrolling (header and four rows).
    m_table->setMinimumHeight(m_table->horizontalHeader()->sizeHint().height() +
                              3 * m_table->verticalHeader()->defaultSectionSize() + 4);
    left->addWidget(m_table, 3);
    connect(m_table, &QTableWidget::cellChanged, this, &BuffersPanel::onCellChanged);
    connect(m_table, &QTableWidget::currentCellChanged, this, &BuffersPanel::showInit);
    connect(m_table, &QTableWidget::cellDoubleClicked, this, [this](int, int column) {
        if (column == Init) {
            m_initEditor->kindChooser()->setFocus();
        }
    });

    // The selected buffer's initial contents, as a form.
    m_initBox = new QGroupBox(tr("Initial contents"), this);
    m_initBox->setObjectName(QStringLiteral("initBox"));
    auto *initLayout = new QVBoxLayout(m_initBox);
    initLayout->setContentsMargins(4, 4, 4, 4);
    m_initEditor = new InitEditor(m_initBox);
    m_initEditor->setObjectName(QStringLiteral("initEditor"));
    initLayout->addWidget(m_initEditor);
    initLayout->addStretch(1);
    m_initBox->setMinimumWidth(190); // beside the launch panel at 1024 px wide
    m_initBox->setMaximumWidth(320);
    // Scalars in their own column, so the panel stays short (a bottom dock) and every table shows rows.
    auto *middle = new QVBoxLayout;
    columns->addLayout(middle, 2);
    columns->addWidget(m_initBox);
    connect(m_initEditor, &InitEditor::committed, this, [this](const QJsonObject &init) {
        const int row = currentBuffer();
        if (row >= 0) {
            // After the editor is done with its signal: the rows are rebuilt in answer.
            QTimer::singleShot(0, this, [this, row, init] { Q_EMIT edited(row, QStringLiteral("init"), init); });
        }
    });

    // Scalars: kernel arguments and variables of every expression.
    m_scalars = new QTableWidget(0, 3, this);
    m_scalars->setObjectName(QStringLiteral("scalars"));
    m_scalars->setHorizontalHeaderLabels({tr("Scalar"), tr("Type"), tr("Value")});
    m_scalars->horizontalHeader()->setStretchLastSection(true);
    m_scalars->verticalHeader()->hide();
    m_scalars->setItemDelegateForColumn(1, new ChoiceDelegate(scalarTypeNames(), this));
    m_scalars->setMinimumHeight(m_scalars->horizontalHeader()->sizeHint().height() +
                                2 * m_scalars->verticalHeader()->defaultSectionSize() + 4);
    middle->addWidget(m_scalars, 1);
    connect(m_scalars, &QTableWidget::cellChanged, this, [this](int row, int column) {
        if (m_updating) {
            return;
        }
        // After the table is done with the edit (the rows are rebuilt in answer).
        QTimer::singleShot(0, this, [this, row, column] {
            QTableWidgetItem *item = m_scalars->item(row, column);
            if (!item) {
                return;
            }
            const QString text = item->text().trimmed();
            static const char *keys[] = {"name", "type", "value"};
            bool ok = false;
            const double v = text.toDouble(&ok);
            Q_EMIT scalarEdited(row, QLatin1String(keys[column]), column == 2 && ok ? QJsonValue(v) : QJsonValue(text));
        });
    });

    m_message = new QLabel(this);
    m_message->setObjectName(QStringLiteral("buffersMessage"));
    m_message->setWordWrap(true);
    m_message->setStyleSheet(QStringLiteral("color: #d73a49;"));
    layout->addWidget(m_message);
    m_message->setMinimumWidth(100); // wraps: a long message never widens the dock

    auto *buttons = new QHBoxLayout;
    auto *scalarButtons = new QHBoxLayout;
    left->addLayout(buttons);
    middle->addLayout(scalarButtons);
    QHBoxLayout *into = buttons;
    // Tool buttons, as wide as their text: the rows fit a bottom dock beside the launch panel.
    const auto button = [&](const QString &name, const QString &text, auto slot) {
        auto *b = new QToolButton(this);
        b->setText(text);
        b->setObjectName(name);
        into->addWidget(b);
        connect(b, &QToolButton::clicked, this, slot);
        return b;
    };
    button(QStringLiteral("addBuffer"), tr("Add"), [this] {
        QString name = QStringLiteral("buf");
        for (int n = 1;; ++n) {
            name = QStringLiteral("buf%1").arg(n);
            if (!m_project.buffer(name) && !m_project.scalar(name)) {
                break;
            }
        }
        Q_EMIT addRequested(QJsonObject{{QStringLiteral("name"), name},
                                        {QStringLiteral("dtype"), QStringLiteral("float32")},
                                        {QStringLiteral("shape"), QJsonArray{1024}}});
        // The new buffer is the last row: show it, selected, with its name ready to type over.
        if (const int last = m_table->rowCount() - 1; last >= 0 && m_table->item(last, Name)->text() == name) {
            selectBuffer(last);
            m_table->editItem(m_table->item(last, Name));
        }
    });
    // "Copy", not "Duplicate": the row of buttons fits beside the launch panel at 1024 px.
    button(QStringLiteral("duplicateBuffer"), tr("Copy"), [this] {
        const int i = currentBuffer();
        if (i < 0) {
            return;
        }
        const BufferSpec &b = m_project.buffers[i];
        QJsonArray shape;
        for (qint64 d : b.shape) {
            shape.append(double(d));
        }
        QString name = b.name + QStringLiteral("_copy");
        while (m_project.buffer(name)) {
            name += QStringLiteral("_");
        }
        QJsonObject o{{QStringLiteral("name"), name},
                      {QStringLiteral("dtype"), dtypeName(b.dtype)},
                      {QStringLiteral("init"), bufferInitToJson(b.init)}};
        if (!shape.isEmpty()) {
            o.insert(QStringLiteral("shape"), shape);
        }
        Q_EMIT addRequested(o);
    });
    button(QStringLiteral("deleteBuffer"), tr("Delete"), [this] {
        if (currentBuffer() >= 0) {
            Q_EMIT removeRequested(currentBuffer());
        }
    });
    // Import is one button with a menu: the row fits a bottom dock at 1280 pixels.
    auto *import = new QToolButton(this);
    import->setObjectName(QStringLiteral("importBuffer"));
    import->setText(tr("Import"));
    import->setToolTip(tr("A new buffer filled from a NumPy file or an image"));
    import->setPopupMode(QToolButton::InstantPopup);
    auto *importMenu = new QMenu(import);
    importMenu->addAction(tr(".npy file…"), this, [this] { importFile(false); });
    importMenu->addAction(tr("Image (PNG, JPEG)…"), this, [this] { importFile(true); });
    import->setMenu(importMenu);
    buttons->addWidget(import);
    button(QStringLiteral("exportBuffer"), tr("Export…"), [this] {
        const int i = currentBuffer();
        if (i < 0) {
            return;
        }
        const QString path =
            QFileDialog::getSaveFileName(this, tr("Export buffer"), m_project.buffers[i].name + QStringLiteral(".npy"),
                                         tr("NumPy (*.npy);;CSV (*.csv);;PNG image, 2-D buffers (*.png)"));
        if (!path.isEmpty()) {
            Q_EMIT exportRequested(i, path);
        }
    });
    buttons->addStretch(1);
    into = scalarButtons;
    button(QStringLiteral("addScalar"), tr("Add"), [this] {
        QString name;
        for (int n = 1;; ++n) {
            name = QStringLiteral("s%1").arg(n);
            if (!m_project.buffer(name) && !m_project.scalar(name)) {
                break;
            }
        }
        Q_EMIT scalarAddRequested(QJsonObject{{QStringLiteral("name"), name},
                                              {QStringLiteral("type"), QStringLiteral("int32")},
                                              {QStringLiteral("value"), 0}});
        if (const int last = m_scalars->rowCount() - 1; last >= 0) {
            m_scalars->setCurrentCell(last, 0);
            m_scalars->scrollToItem(m_scalars->item(last, 0));
        }
    });
    button(QStringLiteral("deleteScalar"), tr("Delete"), [this] {
        const int r = m_scalars->currentRow();
        if (r >= 0 && r < m_project.scalars.size()) {
            Q_EMIT scalarRemoveRequested(r);
        }
    });
    scalarButtons->addStretch(1);
}

void BuffersPanel::selectBuffer(int index)
{
    if (index < 0 || index >= m_table->rowCount()) {
        return;
    }
    m_table->setCurrentCell(index, Name);
    m_table->selectRow(index);
    m_table->scrollToItem(m_table->item(index, Name));
    showInit();
}

void BuffersPanel::showInit()
{
    const int i = currentBuffer();
    if (m_holdInitForm) {
        return;
    }
    m_initBox->setEnabled(i >= 0);
    m_initBox->setTitle(i >= 0 ? tr("Initial contents of %1").arg(m_project.buffers[i].name)
                               : tr("Initial contents (select a buffer)"));
    if (i >= 0) {
        BufferInit init = m_project.buffers[i].init;
        if (init.kind != BufferInit::Kind::Random) {
            // Switched to random, this buffer proposes a seed no other random
            // buffer has: two inputs with one seed hold the same values.
            int seed = 0;
            for (const BufferSpec &b : m_project.buffers) {
                if (b.init.kind == BufferInit::Kind::Random) {
                    seed = std::max(seed, int(std::min<qint64>(b.init.seed, 1 << 30)));
                }
            }
            init.seed = seed + 1;
        }
        m_initEditor->setInit(init);
    }
}

int BuffersPanel::currentBuffer() const
{
    const int r = m_table->currentRow();
    return r >= 0 && r < m_project.buffers.size() ? r : -1;
}

void BuffersPanel::setProject(const Project &project, const HostBuffers *host)
{
    m_updating = true;
    m_project = project;
    const int current = m_table->currentRow();
    m_table->setRowCount(int(project.buffers.size()));
    for (int r = 0; r < project.buffers.size(); ++r) {
        const BufferSpec &b = project.buffers[r];
        const HostBuffer *h = host ? host->find(b.name) : nullptr;
        const QList<qint64> shape = h ? h->shape : b.shape;
        const qint64 elements = h ? h->elementCount() : b.elementCount();
        const qint64 bytes = elements * dtypeInfo(b.dtype).elementBytes();
        const QStringList cells{
            b.name,
            dtypeName(b.dtype),
            shapeText(b.shape.isEmpty() ? shape : b.shape),
            describeInit(b.init),
            QLocale().toString(elements),
            QStringLiteral("%1 (%2)").arg(QLocale().toString(bytes), QLocale().formattedDataSize(bytes))};
        for (int c = 0; c < ColumnCount; ++c) {
            auto *item = new QTableWidgetItem(cells[c]);
            if (c >= Elements) {
                item->setFlags(item->flags() & ~Qt::ItemIsEditable);
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            }
            m_table->setItem(r, c, item);
        }
        m_table->item(r, DTypeCol)->setToolTip(tr("Double-click to choose the element type"));
        m_table->item(r, Shape)->setToolTip(tr("1 to 3 extents, outermost first: \"1080, 1920\" is 1080 rows of 1920"));
        m_table->item(r, Init)->setFlags(m_table->item(r, Init)->flags() & ~Qt::ItemIsEditable);
        m_table->item(r, Init)->setToolTip(tr("%1 — edit it in the form beside the table").arg(cells[Init]));
    }
    m_table->resizeColumnsToContents();
    if (current >= 0 && current < m_table->rowCount()) {
        m_table->setCurrentCell(current, qMax(0, m_table->currentColumn()));
        m_table->selectRow(current);
    } else if (m_table->rowCount() > 0 && current < 0) {
        m_table->setCurrentCell(0, Name);
    }
    m_scalars->setRowCount(int(project.scalars.size()));
    for (int r = 0; r < project.scalars.size(); ++r) {
        const ScalarSpec &sc = project.scalars[r];
        m_scalars->setItem(r, 0, new QTableWidgetItem(sc.name));
        m_scalars->setItem(r, 1, new QTableWidgetItem(dtypeName(sc.type)));
        m_scalars->setItem(r, 2, new QTableWidgetItem(QString::number(sc.value, 'g', QLocale::FloatingPointShortest)));
    }
    m_scalars->resizeColumnToContents(0);
    m_scalars->resizeColumnToContents(1);
    m_scalars->resizeColumnToContents(2);
    // Every column in view: the values were cut to "10", "64" beside a wide buffers table.
    int width = 2 * m_scalars->frameWidth();
    for (int c = 0; c < m_scalars->columnCount(); ++c) {
        width += m_scalars->columnWidth(c);
    }
    m_scalars->setMinimumWidth(qMin(width, 320));
    m_updating = false;
    showInit();
}

void BuffersPanel::setMessage(const QString &error)
{
    m_message->setText(error);
}

void BuffersPanel::onCellChanged(int row, int column)
{
    if (m_updating) {
        return;
    }
    // Report after the table has finished with the edit: the main window
    // rebuilds the rows in answer, which must not happen inside this signal.
    QTimer::singleShot(0, this, [this, row, column] { reportCell(row, column); });
}

void BuffersPanel::reportCell(int row, int column)
{
    if (!m_table->item(row, column)) {
        return;
    }
    const QString text = m_table->item(row, column)->text().trimmed();
    switch (column) {
    case Name: Q_EMIT edited(row, QStringLiteral("name"), text); break;
    case DTypeCol: Q_EMIT edited(row, QStringLiteral("dtype"), text); break;
    case Shape: {
        QJsonArray shape;
        for (const QString &part : text.split(QRegularExpression(QStringLiteral("[,x ]+")), Qt::SkipEmptyParts)) {
            bool ok = false;
            const double v = part.toDouble(&ok);
            shape.append(ok ? QJsonValue(v) : QJsonValue(part));
        }
        Q_EMIT edited(row, QStringLiteral("shape"), shape);
        break;
    }
    default: break;
    }
}

void BuffersPanel::importFile(bool image)
{
    const QString path =
        QFileDialog::getOpenFileName(this, image ? tr("Import image") : tr("Import .npy"), QString(),
                                     image ? tr("Images (*.png *.jpg *.jpeg)") : tr("NumPy arrays (*.npy)"));
    if (!path.isEmpty()) {
        importPath(path, image);
    }
}

void BuffersPanel::importPath(const QString &path, bool image)
{
    QString name = QFileInfo(path).completeBaseName().replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9_]")),
                                                              QStringLiteral("_"));
    if (name.isEmpty() || name[0].isDigit()) {
        name.prepend(QLatin1Char('b'));
    }
    QJsonObject o{{QStringLiteral("name"), name}};
    if (image) {
        o.insert(QStringLiteral("dtype"), QStringLiteral("uchar4"));
        o.insert(QStringLiteral("init"), QJsonObject{{QStringLiteral("kind"), QStringLiteral("image")},
                                                     {QStringLiteral("file"), path},
                                                     {QStringLiteral("mode"), QStringLiteral("rgba8")}});
    } else {
        o.insert(QStringLiteral("dtype"), QStringLiteral("float32")); // the main window adopts the file's dtype
        o.insert(QStringLiteral("init"),
                 QJsonObject{{QStringLiteral("kind"), QStringLiteral("npy")}, {QStringLiteral("file"), path}});
    }
    Q_EMIT addRequested(o);
}

void BuffersPanel::setDocument(ProjectDocument *doc)
{
    const auto show = [this, doc] { setProject(doc->project(), &doc->hostBuffers()); };
    connect(doc, &ProjectDocument::projectChanged, this, show);
    connect(doc, &ProjectDocument::buffersChanged, this, show);
    connect(doc, &ProjectDocument::bufferMessage, this, &BuffersPanel::setMessage);
    if (doc->isOpen()) { // built after the project opened (shell/docks.h)
        show();
        setMessage(doc->bufferMessageText());
    }
    // A refused edit leaves its message and shows the valid project again.
    const auto apply = [this, doc, show](const Status &s) {
        if (!s) {
            setMessage(panelMessage(s.error(), doc->project()));
            // The form keeps what was typed, so the user fixes it rather than typing it again.
            m_holdInitForm = true;
            show();
            m_holdInitForm = false;
        }
    };
    const QString buffers = QStringLiteral("buffers");
    const QString scalars = QStringLiteral("scalars");
    connect(this, &BuffersPanel::edited, doc, [=, this](int index, const QString &key, const QJsonValue &value) {
        QString note;
        const QJsonValue v = key == QLatin1String("init") ? QJsonValue(adoptFile(doc, value.toObject(), &note)) : value;
        if (!note.isEmpty()) {
            Q_EMIT logMessage(note);
        }
        Status s = doc->editListItem(buffers, index, key, v);
        if (!s) {
            // An image's mode and its buffer's dtype go together: alone,
            // neither could change (gray needs a scalar dtype, a scalar dtype
            // refuses rgba8), so the other follows in the same edit.
            if (Status both = editImageTogether(doc, index, key, v); both) {
                s = both;
            }
        }
        apply(s);
    });
    connect(this, &BuffersPanel::addRequested, doc, [=, this](QJsonObject b) {
        QString note;
        if (b.contains(QStringLiteral("init"))) {
            b.insert(QStringLiteral("init"), adoptFile(doc, b.value(QStringLiteral("init")).toObject(), &note));
        }
        const QJsonObject init = b.value(QStringLiteral("init")).toObject();
        if (!note.isEmpty()) {
            Q_EMIT logMessage(note);
            setMessage(note);
        }
        if (init.value(QStringLiteral("kind")).toString() == QLatin1String("npy")) {
            // Adopt the file's dtype, so an import never starts with a mismatch.
            const QString file =
                QDir(doc->project().dir()).absoluteFilePath(init.value(QStringLiteral("file")).toString());
            if (const auto f = openRegularFile(file, kMaxNpyFileBytes, tr("an .npy file"))) {
                if (const auto h = readNpyHeader(**f, file)) {
                    b.insert(QStringLiteral("dtype"), dtypeName(h->dtype));
                }
            }
        }
        apply(doc->appendListItem(buffers, b));
    });
    connect(this, &BuffersPanel::removeRequested, doc, [=](int index) { apply(doc->removeListItem(buffers, index)); });
    connect(this, &BuffersPanel::scalarEdited, doc, [=](int index, const QString &key, const QJsonValue &v) {
        apply(doc->editListItem(scalars, index, key, v));
    });
    connect(this, &BuffersPanel::scalarAddRequested, doc,
            [=](const QJsonObject &sc) { apply(doc->appendListItem(scalars, sc)); });
    connect(this, &BuffersPanel::scalarRemoveRequested, doc,
            [=](int index) { apply(doc->removeListItem(scalars, index)); });
    connect(this, &BuffersPanel::exportRequested, this, [this, doc](int index, const QString &path) {
        const HostBuffer *b = doc->hostBuffers().find(doc->project().buffers.value(index).name);
        if (!b) {
            setMessage(tr("buffer %1 has no contents yet: run once or fix its definition").arg(index));
            return;
        }
        const Status s =
            path.endsWith(QLatin1String(".csv"))   ? exportCsv(path, b->spec.dtype, b->shape, b->memory.data())
            : path.endsWith(QLatin1String(".png")) ? exportPng(path, b->spec.dtype, b->shape, b->memory.data())
                                                   : exportNpy(path, b->spec.dtype, b->shape, b->memory.data());
        setMessage(s ? QString() : s.error().message);
        if (s) {
            Q_EMIT logMessage(tr("Exported buffer '%1' to %2").arg(b->spec.name, path));
        }
    });
    show();
}

BuffersPanel::BuffersPanel(Workbench &wb, QWidget *parent)
    : BuffersPanel(parent)
{
    setDocument(&wb.document());
    connect(this, &BuffersPanel::logMessage, &wb, &Workbench::log);
}

} // namespace Kp

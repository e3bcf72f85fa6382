#include "bufferspanel.h"

#include "app/fieldplace.h"
#include "app/projectdocument.h"
#include "buffers/bufferexport.h"
#include "buffers/bufferinit.h"
#include "buffers/npy.h"
#include "core/safefile.h"
#include "project/bufferjson.h"
#include "run/runner.h"

#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QPushButton>
#include <QRegularExpression>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>

namespace Kp {

namespace {
enum Column { Name, DTypeCol, Shape, Init, Elements, Bytes, ColumnCount };

QString shapeText(const QList<qint64> &shape)
{
    QStringList parts;
    for (qint64 d : shape) {
        parts << QString::number(d);
    }
    return parts.join(QStringLiteral(", "));
}
} // namespace

QString describeInit(const BufferInit &i)
{
    return QString::fromUtf8(QJsonDocument(bufferInitToJson(i)).toJson(QJsonDocument::Compact));
}

BuffersPanel::BuffersPanel(QWidget *parent)
    : QWidget(parent)
{
    auto *layout = new QVBoxLayout(this);
    m_table = new QTableWidget(0, ColumnCount, this);
    m_table->setObjectName(QStringLiteral("buffers"));
    m_table->setHorizontalHeaderLabels(
        {tr("Name"), tr("DType"), tr("Shape"), tr("Initial contents"), tr("Elements"), tr("Bytes")});
    m_table->horizontalHeader()->setSectionResizeMode(Init, QHeaderView::Stretch);
    m_table->verticalHeader()->hide();
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    layout->addWidget(m_table, 1);
    connect(m_table, &QTableWidget::cellChanged, this, &BuffersPanel::onCellChanged);

    // Scalars: kernel arguments and variables of every expression.
    m_scalars = new QTableWidget(0, 3, this);
    m_scalars->setObjectName(QStringLiteral("scalars"));
    m_scalars->setHorizontalHeaderLabels({tr("Scalar"), tr("Type"), tr("Value")});
    m_scalars->horizontalHeader()->setStretchLastSection(true);
    m_scalars->verticalHeader()->hide();
    m_scalars->setMaximumHeight(140);
    layout->addWidget(m_scalars);
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

    auto *buttons = new QHBoxLayout;
    const auto button = [&](const QString &text, auto slot) {
        auto *b = new QPushButton(text, this);
        buttons->addWidget(b);
        connect(b, &QPushButton::clicked, this, slot);
        return b;
    };
    button(tr("Add"), [this] {
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
    });
    button(tr("Duplicate"), [this] {
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
    button(tr("Delete"), [this] {
        if (currentBuffer() >= 0) {
            Q_EMIT removeRequested(currentBuffer());
        }
    });
    button(tr("Import .npy…"), [this] { importFile(false); });
    button(tr("Import image…"), [this] { importFile(true); });
    button(tr("Export…"), [this] {
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
    button(tr("Add scalar"), [this] {
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
    });
    button(tr("Delete scalar"), [this] {
        const int r = m_scalars->currentRow();
        if (r >= 0 && r < m_project.scalars.size()) {
            Q_EMIT scalarRemoveRequested(r);
        }
    });
    buttons->addStretch(1);
    layout->addLayout(buttons);
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
        m_table->item(r, DTypeCol)->setToolTip(dtypeNames().join(QStringLiteral(", ")));
        m_table->item(r, Shape)->setToolTip(tr("1 to 3 extents, outermost first: \"1080, 1920\" is 1080 rows of 1920"));
        m_table->item(r, Init)->setToolTip(
            tr("As in the .kpg file: {\"kind\": \"zeros\"}, {\"kind\": \"constant\", \"value\": 1}, "
               "{\"kind\": \"ramp\", \"start\": 0, \"step\": 1}, {\"kind\": \"random\", \"min\": 0, \"max\": 1, "
               "\"seed\": 1}, {\"kind\": \"expression\", \"expr\": \"sin(x)\"}, {\"kind\": \"npy\", \"file\": "
               "\"a.npy\"}, {\"kind\": \"image\", \"file\": \"in.png\", \"mode\": \"rgba8\"}"));
    }
    m_table->resizeColumnsToContents();
    if (current >= 0 && current < m_table->rowCount()) {
        m_table->selectRow(current);
    }
    m_scalars->setRowCount(int(project.scalars.size()));
    for (int r = 0; r < project.scalars.size(); ++r) {
        const ScalarSpec &sc = project.scalars[r];
        m_scalars->setItem(r, 0, new QTableWidgetItem(sc.name));
        m_scalars->setItem(r, 1, new QTableWidgetItem(dtypeName(sc.type)));
        m_scalars->setItem(r, 2, new QTableWidgetItem(QString::number(sc.value, 'g', 17)));
    }
    m_updating = false;
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
    case Init: {
        QJsonParseError pe;
        const QJsonDocument doc = QJsonDocument::fromJson(text.toUtf8(), &pe);
        if (pe.error != QJsonParseError::NoError || !doc.isObject()) {
            setMessage(tr("buffers[%1].init: not a JSON object (%2); write it as in the .kpg file, e.g. "
                          "{\"kind\": \"random\", \"seed\": 1}")
                           .arg(row)
                           .arg(pe.errorString()));
            return;
        }
        Q_EMIT edited(row, QStringLiteral("init"), doc.object());
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
    if (path.isEmpty()) {
        return;
    }
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
    // A refused edit leaves its message and shows the valid project again.
    const auto apply = [this, doc, show](const Status &s) {
        if (!s) {
            setMessage(panelMessage(s.error(), doc->project()));
            show();
        }
    };
    const QString buffers = QStringLiteral("buffers");
    const QString scalars = QStringLiteral("scalars");
    connect(this, &BuffersPanel::edited, doc, [=](int index, const QString &key, const QJsonValue &v) {
        apply(doc->editListItem(buffers, index, key, v));
    });
    connect(this, &BuffersPanel::addRequested, doc, [=](QJsonObject b) {
        const QJsonObject init = b.value(QStringLiteral("init")).toObject();
        if (init.value(QStringLiteral("kind")).toString() == QLatin1String("npy")) {
            // Adopt the file's dtype, so an import never starts with a mismatch.
            const QString file = init.value(QStringLiteral("file")).toString();
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

} // namespace Kp

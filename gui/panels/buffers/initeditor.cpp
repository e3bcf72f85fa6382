#include "initeditor.h"

#include "buffers/bufferinit.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QStackedWidget>
#include <QVBoxLayout>

namespace Kp {

namespace {
// The kinds in the order the chooser lists them, with their .kpg names.
const BufferInit::Kind kKinds[] = {BufferInit::Kind::Zeros,  BufferInit::Kind::Constant,     BufferInit::Kind::Ramp,
                                   BufferInit::Kind::Random, BufferInit::Kind::Expression,   BufferInit::Kind::Npy,
                                   BufferInit::Kind::Image,  BufferInit::Kind::Uninitialized};

QString number(double v)
{
    return QString::number(v, 'g', QLocale::FloatingPointShortest);
}

/** A field's text as JSON: a number when it reads as one, else the text (the document says what is wrong). */
QJsonValue numberOrText(const QString &text)
{
    bool ok = false;
    const double v = text.trimmed().toDouble(&ok);
    return ok ? QJsonValue(v) : QJsonValue(text.trimmed());
}
} // namespace

QString describeInit(const BufferInit &i)
{
    switch (i.kind) {
    case BufferInit::Kind::Zeros: return QObject::tr("zeros");
    case BufferInit::Kind::Constant: return QObject::tr("constant %1").arg(number(i.value));
    case BufferInit::Kind::Ramp: return QObject::tr("ramp from %1, step %2").arg(number(i.start), number(i.step));
    case BufferInit::Kind::Random:
        return i.distribution == BufferInit::Distribution::Normal
                   ? QObject::tr("random normal, mean %1, stddev %2, seed %3")
                         .arg(number(i.mean), number(i.stddev))
                         .arg(i.seed)
                   : QObject::tr("random uniform [%1, %2), seed %3").arg(number(i.min), number(i.max)).arg(i.seed);
    case BufferInit::Kind::Expression: return QObject::tr("expression %1").arg(i.expression);
    case BufferInit::Kind::Npy: return QObject::tr(".npy file %1").arg(i.file);
    case BufferInit::Kind::Image: return QObject::tr("image %1 (%2)").arg(i.file, imageModeName(i.imageMode));
    case BufferInit::Kind::Uninitialized: return QObject::tr("uninitialized (never written from the host)");
    }
    return {};
}

InitEditor::InitEditor(QWidget *parent)
    : QWidget(parent)
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto *top = new QFormLayout;
    m_kind = new QComboBox(this);
    m_kind->setObjectName(QStringLiteral("initKind"));
    for (const QString &label : {tr("zeros"), tr("constant"), tr("ramp"), tr("random"), tr("expression"),
                                 tr(".npy file"), tr("image"), tr("uninitialized")}) {
        m_kind->addItem(label);
    }
    m_kind->setToolTip(tr("How the buffer is filled before each Run"));
    top->addRow(tr("Kind"), m_kind);
    layout->addLayout(top);

    m_pages = new QStackedWidget(this);
    layout->addWidget(m_pages);
    const auto page = [this](const QString &note = QString()) {
        auto *w = new QWidget(m_pages);
        auto *form = new QFormLayout(w);
        form->setContentsMargins(0, 0, 0, 0);
        form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
        if (!note.isEmpty()) {
            auto *label = new QLabel(note, w);
            label->setWordWrap(true);
            form->addRow(label);
        }
        m_pages->addWidget(w);
        return form;
    };
    page(tr("Every byte 0."));
    addField(page(), QStringLiteral("value"), tr("Value"), tr("Every component of every element"));
    QFormLayout *ramp = page(tr("Component k (flat index) is start + k·step."));
    addField(ramp, QStringLiteral("start"), tr("Start"), tr("The first component's value"));
    addField(ramp, QStringLiteral("step"), tr("Step"), tr("Added per component"));
    // Random: two fields a row, so the form stays as short as a bottom dock.
    auto *randomPage = new QWidget(m_pages);
    m_randomGrid = new QGridLayout(randomPage);
    m_randomGrid->setContentsMargins(0, 0, 0, 0);
    m_pages->addWidget(randomPage);
    m_distribution = new QComboBox(this);
    m_distribution->setObjectName(QStringLiteral("initDistribution"));
    m_distribution->addItem(tr("uniform"), QStringLiteral("uniform"));
    m_distribution->addItem(tr("normal"), QStringLiteral("normal"));
    const auto pair = [this](int row, int column, const QString &key, const QString &label, const QString &tip) {
        auto *l = new QLabel(label, this);
        QLineEdit *e = addField(nullptr, key, label, tip);
        l->setBuddy(e);
        e->setProperty("label", QVariant::fromValue<QObject *>(l));
        m_randomGrid->addWidget(l, row, column);
        m_randomGrid->addWidget(e, row, column + 1);
    };
    // The distribution over the whole row: beside the seed, "Distribution"
    // and its choice were cut in a form narrow enough for 1024 px.
    m_randomGrid->addWidget(new QLabel(tr("Distribution"), this), 0, 0, 1, 2);
    m_randomGrid->addWidget(m_distribution, 0, 2, 1, 2);
    pair(1, 0, QStringLiteral("min"), tr("Min"), tr("Uniform values are in [min, max)"));
    pair(1, 2, QStringLiteral("max"), tr("Max"), tr("Uniform values are in [min, max)"));
    pair(2, 0, QStringLiteral("mean"), tr("Mean"), tr("Of the normal distribution"));
    pair(2, 2, QStringLiteral("stddev"), tr("Stddev"), tr("Of the normal distribution, ≥ 0"));
    pair(3, 0, QStringLiteral("seed"), tr("Seed"),
         tr("A non-negative integer: the same seed gives the same values on every machine"));
    m_randomGrid->setColumnStretch(1, 1);
    m_randomGrid->setColumnStretch(3, 1);
    connect(m_distribution, &QComboBox::activated, this, [this] {
        showDistributionFields();
        commit();
    });
    addField(page(), QStringLiteral("expr"), tr("Expression"),
             tr("Per component, over i (flat index), x, y, z, c (component), nx, ny, nz, n and the scalars, "
                "e.g. sin(x / nx * 6.28)"));
    QFormLayout *npy = page(tr("The shape and dtype come from the file when the shape is left empty."));
    npy->addRow(tr("File"), fileRow(QStringLiteral("npy.file"), tr("NumPy arrays (*.npy)")));
    QFormLayout *image = page();
    image->addRow(tr("File"), fileRow(QStringLiteral("image.file"), tr("Images (*.png *.jpg *.jpeg)")));
    m_imageMode = new QComboBox(this);
    m_imageMode->setObjectName(QStringLiteral("initImageMode"));
    m_imageMode->addItem(tr("rgba8: uchar4 bytes"), QStringLiteral("rgba8"));
    m_imageMode->addItem(tr("gray: one value per pixel"), QStringLiteral("gray"));
    m_imageMode->addItem(tr("rgba: float4, 0..1"), QStringLiteral("rgba"));
    image->addRow(tr("Mode"), m_imageMode);
    connect(m_imageMode, &QComboBox::activated, this, &InitEditor::commit);
    page(tr("Allocated on the GPU and never written from the host, as cudaMalloc memory is: Check memory "
            "(initcheck) finds reads of it."));

    connect(m_kind, &QComboBox::activated, this, [this](int index) {
        m_pages->setCurrentIndex(index);
        // A kind that needs a file waits for one; the others start from their defaults.
        const BufferInit::Kind k = kKinds[index];
        if ((k == BufferInit::Kind::Npy || k == BufferInit::Kind::Image) &&
            field(k == BufferInit::Kind::Npy ? QStringLiteral("npy.file") : QStringLiteral("image.file"))
                ->text()
                .trimmed()
                .isEmpty()) {
            return;
        }
        commit();
    });
    setInit(BufferInit{});
}

QLineEdit *InitEditor::addField(QFormLayout *form, const QString &key, const QString &label, const QString &tip)
{
    auto *edit = new QLineEdit(this);
    edit->setObjectName(QStringLiteral("init_") + QString(key).replace(QLatin1Char('.'), QLatin1Char('_')));
    edit->setToolTip(tip);
    m_fields.insert(key, edit);
    if (form) {
        form->addRow(label, edit);
    }
    connect(edit, &QLineEdit::editingFinished, this, [this, edit] {
        if (edit->isModified()) {
            edit->setModified(false);
            commit();
        }
    });
    return edit;
}

QWidget *InitEditor::fileRow(const QString &key, const QString &filter)
{
    auto *row = new QWidget(this);
    auto *h = new QHBoxLayout(row);
    h->setContentsMargins(0, 0, 0, 0);
    QLineEdit *edit = addField(nullptr, key, QString(), tr("Relative to the project's folder, or absolute"));
    h->addWidget(edit, 1);
    auto *browse = new QPushButton(tr("Browse…"), row);
    h->addWidget(browse);
    connect(browse, &QPushButton::clicked, this, [this, edit, filter] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Initial contents"), edit->text(), filter);
        if (!path.isEmpty()) {
            edit->setText(path);
            commit();
        }
    });
    return row;
}

QLineEdit *InitEditor::field(const QString &key) const
{
    return m_fields.value(key);
}

void InitEditor::showDistributionFields()
{
    const bool normal = m_distribution->currentData().toString() == QLatin1String("normal");
    for (const char *k : {"min", "max", "mean", "stddev"}) {
        QLineEdit *e = field(QLatin1String(k));
        const bool normalField = qstrcmp(k, "mean") == 0 || qstrcmp(k, "stddev") == 0;
        const bool show = normalField == normal;
        e->setVisible(show);
        if (auto *l = qobject_cast<QWidget *>(e->property("label").value<QObject *>())) {
            l->setVisible(show);
        }
    }
}

void InitEditor::setInit(const BufferInit &init)
{
    m_updating = true;
    const BufferInit d; // every field shows its default until the init sets it
    const auto set = [this](const char *key, const QString &text) {
        field(QLatin1String(key))->setText(text);
        field(QLatin1String(key))->setModified(false);
    };
    set("value", number(init.kind == BufferInit::Kind::Constant ? init.value : d.value));
    set("start", number(init.start));
    set("step", number(init.step));
    set("min", number(init.min));
    set("max", number(init.max));
    set("mean", number(init.mean));
    set("stddev", number(init.stddev));
    set("seed", QString::number(init.seed));
    set("expr", init.kind == BufferInit::Kind::Expression ? init.expression : QStringLiteral("i"));
    set("npy.file", init.kind == BufferInit::Kind::Npy ? init.file : QString());
    set("image.file", init.kind == BufferInit::Kind::Image ? init.file : QString());
    m_distribution->setCurrentIndex(init.distribution == BufferInit::Distribution::Normal ? 1 : 0);
    m_imageMode->setCurrentIndex(int(init.imageMode));
    for (int i = 0; i < int(std::size(kKinds)); ++i) {
        if (kKinds[i] == init.kind) {
            m_kind->setCurrentIndex(i);
            m_pages->setCurrentIndex(i);
        }
    }
    showDistributionFields();
    m_updating = false;
}

QJsonObject InitEditor::currentJson() const
{
    const BufferInit::Kind kind = kKinds[qBound(0, m_kind->currentIndex(), int(std::size(kKinds)) - 1)];
    QJsonObject o{{QStringLiteral("kind"), BufferInit::kindName(kind)}};
    const auto put = [&](const char *key) {
        o.insert(QLatin1String(key), numberOrText(field(QLatin1String(key))->text()));
    };
    switch (kind) {
    case BufferInit::Kind::Zeros:
    case BufferInit::Kind::Uninitialized: break;
    case BufferInit::Kind::Constant: put("value"); break;
    case BufferInit::Kind::Ramp:
        put("start");
        put("step");
        break;
    case BufferInit::Kind::Random: {
        const bool normal = m_distribution->currentData().toString() == QLatin1String("normal");
        o.insert(QStringLiteral("distribution"), m_distribution->currentData().toString());
        put(normal ? "mean" : "min");
        put(normal ? "stddev" : "max");
        put("seed");
        break;
    }
    case BufferInit::Kind::Expression: o.insert(QStringLiteral("expr"), field(QStringLiteral("expr"))->text()); break;
    case BufferInit::Kind::Npy: o.insert(QStringLiteral("file"), field(QStringLiteral("npy.file"))->text()); break;
    case BufferInit::Kind::Image:
        o.insert(QStringLiteral("file"), field(QStringLiteral("image.file"))->text());
        o.insert(QStringLiteral("mode"), m_imageMode->currentData().toString());
        break;
    }
    return o;
}

void InitEditor::commit()
{
    if (!m_updating) {
        Q_EMIT committed(currentJson());
    }
}

} // namespace Kp

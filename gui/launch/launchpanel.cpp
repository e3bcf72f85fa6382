#include "launchpanel.h"

#include "app/fieldplace.h"
#include "app/projectdocument.h"
#include "run/runner.h"

#include <QComboBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

namespace Kp {

namespace {
const char *kAxis[3] = {"x", "y", "z"};

void markField(QWidget *w, const QString &error)
{
    // A red frame says which field is wrong; the tooltip says why.
    w->setStyleSheet(error.isEmpty() ? QString() : QStringLiteral("border: 2px solid #d73a49;"));
    w->setToolTip(error);
}

QJsonValue numberOrText(const QString &text)
{
    bool ok = false;
    const double v = text.trimmed().toDouble(&ok);
    return ok ? QJsonValue(v) : QJsonValue(text.trimmed());
}
} // namespace

LaunchPanel::LaunchPanel(QWidget *parent)
    : QWidget(parent)
{
    auto *layout = new QVBoxLayout(this);
    auto *form = new QFormLayout;
    layout->addLayout(form);

    m_stepChooser = new QComboBox(this);
    m_stepChooser->setObjectName(QStringLiteral("stepChooser"));
    form->addRow(tr("Step"), m_stepChooser);
    connect(m_stepChooser, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (!m_updating && i >= 0) {
            m_step = i;
            setProject(m_project);
        }
    });

    m_kernel = new QComboBox(this);
    m_kernel->setObjectName(QStringLiteral("kernelChooser"));
    m_kernel->setEditable(true); // template instances are typed: "matmul<16>"
    form->addRow(tr("Kernel"), m_kernel);
    connect(m_kernel, &QComboBox::currentTextChanged, this, [this](const QString &text) {
        if (!m_updating && !text.trimmed().isEmpty()) {
            Q_EMIT edited(m_step, QStringLiteral("kernel"), text.trimmed());
        }
    });

    // Grid items are often expressions ("ceil_div(width, block.x)"): one per
    // line, full width. Block items are short numbers: one line.
    const auto dimFields = [this](QLineEdit *fields[3], const QString &key) {
        for (int a = 0; a < 3; ++a) {
            fields[a] = new QLineEdit(this);
            fields[a]->setObjectName(QStringLiteral("%1_%2").arg(key, QLatin1String(kAxis[a])));
            fields[a]->setPlaceholderText(QStringLiteral("1"));
            fields[a]->setToolTip(tr("A number or an expression over the scalars, block.x and a.n/a.nx/a.ny of "
                                     "each buffer, e.g. ceil_div(n, block.x)"));
            connect(fields[a], &QLineEdit::editingFinished, this, [this, fields, key] { emitDims(key, fields); });
        }
    };
    const auto dimRow = [this, form, dimFields](const QString &label, QLineEdit *fields[3], const QString &key,
                                                bool stacked) {
        dimFields(fields, key);
        auto *grid = new QGridLayout;
        for (int a = 0; a < 3; ++a) {
            const int row = stacked ? a : 0;
            const int col = stacked ? 0 : 2 * a;
            grid->addWidget(new QLabel(QLatin1String(kAxis[a]), this), row, col);
            grid->addWidget(fields[a], row, col + 1);
            grid->setColumnStretch(col + 1, 1);
        }
        form->addRow(label, grid);
    };
    dimRow(tr("Block"), m_block, QStringLiteral("block"), false);
    dimRow(tr("Grid"), m_grid, QStringLiteral("grid"), true);
    m_shared = new QLineEdit(this);
    m_shared->setObjectName(QStringLiteral("sharedBytes"));
    m_shared->setPlaceholderText(QStringLiteral("0"));
    form->addRow(tr("Dynamic shared (bytes)"), m_shared);
    connect(m_shared, &QLineEdit::editingFinished, this, [this] {
        if (!m_updating) {
            Q_EMIT edited(m_step, QStringLiteral("sharedBytes"),
                          numberOrText(m_shared->text().isEmpty() ? QStringLiteral("0") : m_shared->text()));
        }
    });
    m_resolved = new QLabel(this);
    m_resolved->setObjectName(QStringLiteral("resolved"));
    m_resolved->setWordWrap(true);
    form->addRow(tr("Resolves to"), m_resolved);
    m_occupancy = new QLabel(tr("run once to see occupancy"), this);
    m_occupancy->setObjectName(QStringLiteral("occupancy"));
    m_occupancy->setWordWrap(true);
    form->addRow(tr("Occupancy"), m_occupancy);

    m_args = new QTableWidget(0, 3, this);
    m_args->setObjectName(QStringLiteral("arguments"));
    m_args->setHorizontalHeaderLabels({tr("Parameter"), tr("Type"), tr("Bound to")});
    m_args->horizontalHeader()->setStretchLastSection(true);
    m_args->verticalHeader()->hide();
    m_args->setEditTriggers(QAbstractItemView::NoEditTriggers);
    layout->addWidget(m_args, 1);

    m_message = new QLabel(this);
    m_message->setObjectName(QStringLiteral("launchMessage"));
    m_message->setWordWrap(true);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_message);

    auto *timing = new QHBoxLayout;
    m_timingMode = new QComboBox(this);
    m_timingMode->addItem(tr("cold (L2 flushed)"), QStringLiteral("cold"));
    m_timingMode->addItem(tr("hot (batched)"), QStringLiteral("hot"));
    m_timingMode->addItem(tr("off (run once)"), QStringLiteral("off"));
    m_minSamples = new QSpinBox(this);
    m_minSamples->setRange(1, 100000);
    m_minSamples->setPrefix(tr("min samples "));
    timing->addWidget(new QLabel(tr("Timing"), this));
    timing->addWidget(m_timingMode, 1);
    timing->addWidget(m_minSamples);
    layout->addLayout(timing);
    connect(m_timingMode, &QComboBox::currentIndexChanged, this, [this] {
        if (m_updating) {
            return;
        }
        const QString mode = m_timingMode->currentData().toString();
        if (mode == QLatin1String("off")) {
            Q_EMIT timingEdited(QStringLiteral("enabled"), false);
        } else {
            Q_EMIT timingEdited(QStringLiteral("enabled"), true);
            Q_EMIT timingEdited(QStringLiteral("mode"), mode);
        }
    });
    connect(m_minSamples, &QSpinBox::editingFinished, this, [this] {
        if (!m_updating) {
            Q_EMIT timingEdited(QStringLiteral("minSamples"), m_minSamples->value());
        }
    });

    auto *buttons = new QHBoxLayout;
    m_run = new QPushButton(tr("Run (Ctrl+Enter)"), this);
    m_run->setObjectName(QStringLiteral("run"));
    m_abort = new QPushButton(tr("Abort (Esc)"), this);
    m_abort->setObjectName(QStringLiteral("abort"));
    m_abort->setEnabled(false);
    m_play = new QPushButton(tr("Play"), this);
    m_play->setObjectName(QStringLiteral("play"));
    m_play->setCheckable(true);
    m_play->setToolTip(tr("Run the steps again and again without re-initialising the buffers (time-stepping "
                          "kernels), refreshing the inspector after each run"));
    m_stepOnce = new QPushButton(tr("Step"), this);
    m_stepOnce->setObjectName(QStringLiteral("stepOnce"));
    buttons->addWidget(m_run, 1);
    buttons->addWidget(m_abort);
    buttons->addWidget(m_play);
    buttons->addWidget(m_stepOnce);
    layout->addLayout(buttons);
    connect(m_run, &QPushButton::clicked, this, &LaunchPanel::runRequested);
    connect(m_abort, &QPushButton::clicked, this, &LaunchPanel::abortRequested);
    connect(m_play, &QPushButton::toggled, this, [this](bool on) {
        m_play->setText(on ? tr("Pause") : tr("Play"));
        Q_EMIT playToggled(on);
    });
    connect(m_stepOnce, &QPushButton::clicked, this, &LaunchPanel::stepRequested);
}

void LaunchPanel::setProject(const Project &project)
{
    m_updating = true;
    m_project = project;
    m_stepChooser->clear();
    for (qsizetype i = 0; i < project.launches.size(); ++i) {
        m_stepChooser->addItem(tr("%1: %2").arg(i + 1).arg(project.launches[i].kernel));
    }
    m_step = qBound(0, m_step, int(qMax<qsizetype>(0, project.launches.size() - 1)));
    m_stepChooser->setCurrentIndex(m_step);
    m_stepChooser->setVisible(project.launches.size() > 1);
    const bool has = !project.launches.isEmpty();
    const LaunchStep step = has ? project.launches[m_step] : LaunchStep{};
    if (m_kernel->findText(step.kernel) < 0 && !step.kernel.isEmpty()) {
        m_kernel->addItem(step.kernel);
    }
    m_kernel->setCurrentText(step.kernel);
    for (int a = 0; a < 3; ++a) {
        m_grid[a]->setText(step.grid.value(a));
        m_block[a]->setText(step.block.value(a));
    }
    m_shared->setText(step.sharedBytes == QLatin1String("0") ? QString() : step.sharedBytes);
    const TimingSpec &t = project.timing;
    m_timingMode->setCurrentIndex(!t.enabled ? 2 : t.mode == TimingSpec::Mode::Hot ? 1 : 0);
    m_minSamples->setValue(t.minSamples);
    m_updating = false;
    rebuildArgs();
}

void LaunchPanel::setKernels(const QList<KernelInfo> &kernels)
{
    m_kernels = kernels;
    m_updating = true;
    const QString current = m_kernel->currentText();
    m_kernel->clear();
    for (const KernelInfo &k : kernels) {
        if (!k.isTemplate || !k.loweredName.isEmpty()) {
            m_kernel->addItem(k.name);
        }
    }
    if (m_kernel->findText(current) < 0 && !current.isEmpty()) {
        m_kernel->addItem(current);
    }
    m_kernel->setCurrentText(current);
    m_updating = false;
    rebuildArgs();
}

QString LaunchPanel::bindingText(const ArgBinding &b) const
{
    switch (b.kind) {
    case ArgBinding::Kind::Buffer: return b.offset ? QStringLiteral("%1+%2").arg(b.name).arg(b.offset) : b.name;
    case ArgBinding::Kind::Scalar: return b.name;
    case ArgBinding::Kind::Literal: return QString::number(b.value, 'g', 17);
    }
    return {};
}

void LaunchPanel::rebuildArgs()
{
    if (m_project.launches.isEmpty()) {
        m_args->setRowCount(0);
        return;
    }
    const LaunchStep &step = m_project.launches[m_step];
    const KernelInfo *kernel = findKernel(m_kernels, step.kernel); // as the run will find it
    // One row per parameter of the kernel as it is now; bindings by position,
    // or by name when the project binds by name. Extra bindings get rows too.
    const int params = kernel ? int(kernel->params.size()) : 0;
    const int rows = qMax(params, int(step.args.size()));
    // Rebuilding the row widgets costs a few milliseconds; skip it when
    // neither the signature nor the bindings changed (most keystrokes).
    QStringList key;
    for (int r = 0; r < params; ++r) {
        key << kernel->params[r].name + QLatin1Char(':') + kernel->params[r].type;
    }
    for (const ArgBinding &b : step.args) {
        key << b.param + QLatin1Char('=') + bindingText(b);
    }
    for (const BufferSpec &b : m_project.buffers) {
        key << QStringLiteral("buffer ") + b.name;
    }
    for (const ScalarSpec &s : m_project.scalars) {
        key << QStringLiteral("scalar ") + s.name;
    }
    const QString signature = key.join(QLatin1Char('\n'));
    if (signature == m_argsKey && m_args->rowCount() == rows) {
        return;
    }
    m_argsKey = signature;
    m_args->setRowCount(rows);
    QStringList choices;
    for (const BufferSpec &b : m_project.buffers) {
        choices << b.name;
    }
    for (const ScalarSpec &s : m_project.scalars) {
        choices << s.name;
    }
    for (int r = 0; r < rows; ++r) {
        const KernelParam *p = r < params ? &kernel->params[r] : nullptr;
        const ArgBinding *b = nullptr;
        if (p && !step.args.isEmpty() && !step.args.first().param.isEmpty()) {
            for (const ArgBinding &x : step.args) {
                if (x.param == p->name) {
                    b = &x;
                }
            }
        } else if (r < step.args.size()) {
            b = &step.args[r];
        }
        auto *name = new QTableWidgetItem(p ? p->name : tr("(extra)"));
        auto *type = new QTableWidgetItem(p ? p->type : QString());
        m_args->setItem(r, 0, name);
        m_args->setItem(r, 1, type);
        auto *combo = new QComboBox(m_args);
        combo->setEditable(true);
        combo->addItems(choices);
        combo->setCurrentText(b ? bindingText(*b) : QString());
        combo->setToolTip(tr("A buffer (a+16 for an element offset), a scalar, or a number"));
        connect(combo, &QComboBox::currentTextChanged, this, [this] {
            if (!m_updating) {
                emitArgs();
            }
        });
        m_args->setCellWidget(r, 2, combo);
    }
    m_args->resizeColumnToContents(0);
    m_args->resizeColumnToContents(1);
}

void LaunchPanel::emitDims(const QString &key, QLineEdit *const fields[3])
{
    if (m_updating) {
        return;
    }
    QJsonArray items;
    int last = 0;
    for (int a = 0; a < 3; ++a) {
        if (!fields[a]->text().trimmed().isEmpty()) {
            last = a + 1;
        }
    }
    for (int a = 0; a < qMax(1, last); ++a) {
        const QString t = fields[a]->text().trimmed();
        items.append(numberOrText(t.isEmpty() ? QStringLiteral("1") : t));
    }
    Q_EMIT edited(m_step, key, items);
}

void LaunchPanel::emitArgs()
{
    QJsonArray args;
    for (int r = 0; r < m_args->rowCount(); ++r) {
        auto *combo = qobject_cast<QComboBox *>(m_args->cellWidget(r, 2));
        const QString t = combo ? combo->currentText().trimmed() : QString();
        if (t.isEmpty()) {
            continue;
        }
        args.append(numberOrText(t));
    }
    Q_EMIT edited(m_step, QStringLiteral("args"), args);
}

void LaunchPanel::setValidation(const QString &error, const QString &errorPath, const QStringList &warnings,
                                const QString &resolved)
{
    // The field comes from the error's structured path, never from its text.
    const QString prefix = QStringLiteral("launches[%1]").arg(m_step);
    const auto at = [&](const QString &field) { return errorPath == prefix + field; };
    for (int a = 0; a < 3; ++a) {
        markField(m_grid[a], at(QStringLiteral(".grid[%1]").arg(a)) ? error : QString());
        markField(m_block[a], at(QStringLiteral(".block[%1]").arg(a)) ? error : QString());
    }
    markField(m_shared, at(QStringLiteral(".sharedBytes")) ? error : QString());
    markField(m_kernel, at(QStringLiteral(".kernel")) ? error : QString());
    // "args" (the count: every row), "args[k]" or "args[k].offset" (row k),
    // "args.NAME..." (the row of parameter NAME).
    static const QRegularExpression argRe(
        QStringLiteral(R"(^launches\[(\d+)\]\.args(?:\[(\d+)\]|\.(\w+))?(?:\..*)?$)"));
    const auto m = argRe.match(errorPath);
    for (int r = 0; r < m_args->rowCount(); ++r) {
        bool mark = false;
        if (m.hasMatch() && m.captured(1).toInt() == m_step) {
            if (!m.captured(2).isEmpty()) {
                mark = m.captured(2).toInt() == r;
            } else if (!m.captured(3).isEmpty()) {
                mark = m_args->item(r, 0) && m_args->item(r, 0)->text() == m.captured(3);
            } else {
                mark = true; // the count is wrong: every row
            }
        }
        for (int c = 0; c < 2; ++c) {
            if (QTableWidgetItem *it = m_args->item(r, c)) {
                it->setBackground(mark ? QColor(0xfde8e8) : QBrush());
                it->setForeground(mark ? QColor(0x9a1b1b) : QBrush());
                it->setToolTip(mark ? error : QString());
            }
        }
        for (const QString &w : warnings) {
            if (w.startsWith(prefix + QStringLiteral(".args[%1]").arg(r)) && m_args->item(r, 0)) {
                m_args->item(r, 0)->setBackground(QColor(0xfff5d6));
                m_args->item(r, 0)->setToolTip(w);
            }
        }
    }
    QString text = error;
    if (!warnings.isEmpty()) {
        text += (text.isEmpty() ? QString() : QStringLiteral("\n")) + warnings.join(QLatin1Char('\n'));
    }
    m_message->setText(text);
    m_message->setStyleSheet(error.isEmpty() ? QString() : QStringLiteral("color: #d73a49;"));
    m_resolved->setText(resolved);
    m_run->setEnabled(error.isEmpty());
}

void LaunchPanel::setOccupancy(const QString &text)
{
    m_occupancy->setText(text);
}

void LaunchPanel::setRunning(bool running)
{
    m_abort->setEnabled(running);
    m_run->setEnabled(!running);
}

void LaunchPanel::setDocument(ProjectDocument *doc)
{
    const auto showValidation = [this, doc] {
        const Validation &v = doc->validation();
        const int step = qBound(0, m_step, int(v.resolved.size()) - 1);
        setValidation(v.error ? panelMessage(*v.error, doc->project()) : QString(), v.error ? v.error->path : QString(),
                      v.warnings, v.error ? QString() : v.resolved.value(step));
    };
    const auto refused = [this, doc](const Status &s) {
        if (!s) {
            setValidation(panelMessage(s.error(), doc->project()), s.error().path, {}, {});
        }
    };
    connect(doc, &ProjectDocument::projectChanged, this, [this, doc] { setProject(doc->project()); });
    connect(doc, &ProjectDocument::validationChanged, this, showValidation);
    connect(this, &LaunchPanel::edited, doc, [doc, refused](int step, const QString &key, const QJsonValue &value) {
        refused(doc->editLaunch(step, key, value));
    });
    connect(this, &LaunchPanel::timingEdited, doc,
            [doc, refused](const QString &key, const QJsonValue &value) { refused(doc->editTiming(key, value)); });
    setProject(doc->project());
}

} // namespace Kp

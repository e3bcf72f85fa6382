#include "launchpanel.h"

#include "buffers/dtype.h"
#include "core/format.h"
#include "project/launchedits.h"
#include "project/projectio.h"
#include "run/runner.h"
#include "workbench/compilecontroller.h"
#include "workbench/devices.h"
#include "workbench/fieldplace.h"
#include "workbench/projectdocument.h"
#include "workbench/runcontroller.h"
#include "workbench/selection.h"
#include "workbench/workbench.h"

#include <QComboBox>
#include <QEvent>
#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMenu>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QTableWidget>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include <functional>

namespace Kp {

namespace {

/**
 * A binding longer than its cell (a struct's braced value) shows its start,
 * where the type's first fields are, not its end where the cursor was left.
 */
void showStart(QComboBox *combo)
{
    if (QLineEdit *edit = combo->lineEdit(); edit && !edit->hasFocus()) {
        edit->setCursorPosition(0);
    }
}

/**
 * A wrapping label's height for its width, as its minimum: the dock's
 * layout does not ask labels for their height for a width, so in a short
 * window "Resolves to" was squeezed to one overlapping line.
 */
void fitWrappedHeight(QLabel *label)
{
    if (!label->isVisible() || label->width() < 80) {
        return; // not laid out yet: a narrow width's height would make the window tall
    }
    // At most three lines: the label never makes the panel taller than the window.
    const int h = qMin(label->heightForWidth(label->width()), 3 * label->fontMetrics().lineSpacing() + 4);
    if (h > 0 && label->minimumHeight() != h) {
        label->setMinimumHeight(h);
    }
}

/** Refits the label whenever its width changes. */
class WrappedHeight : public QObject
{
public:
    using QObject::QObject;
    bool eventFilter(QObject *watched, QEvent *event) override
    {
        if (event->type() == QEvent::Resize) {
            fitWrappedHeight(static_cast<QLabel *>(watched));
        }
        return false;
    }
};

void keepWrappedHeight(QLabel *label)
{
    label->installEventFilter(new WrappedHeight(label));
}

const char *kAxis[3] = {"x", "y", "z"};

void markField(QWidget *w, const QString &error)
{
    // A red frame says which field is wrong; the tooltip says why (or, when
    // nothing is wrong, what the field takes).
    w->setStyleSheet(error.isEmpty() ? QString() : QStringLiteral("border: 2px solid #d73a49;"));
    w->setToolTip(error.isEmpty() ? w->property("defaultToolTip").toString() : error);
}

/** Item data of the binding list's "new buffer NAME" / "new scalar NAME" entries. */
const QString kNewEntry = QStringLiteral("new-for-parameter");
} // namespace

LaunchPanel::LaunchPanel(QWidget *parent)
    : QWidget(parent)
{
    auto *layout = new QVBoxLayout(this);
    auto *form = new QFormLayout;
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    layout->addLayout(form);

    buildStepRow(form);
    buildStreamFields(form);
    connectStepButtons();
    buildKernelFields(form);
    buildStepKindFields(form);
    buildRepeat(form);
    buildArguments(layout);
    buildTiming(layout);
    buildButtons(layout);
}

void LaunchPanel::buildStepRow(QFormLayout *form)
{
    // Steps: which one the fields below show, and the controls to add, remove and reorder them.
    m_stepChooser = new QComboBox(this);
    m_stepChooser->setObjectName(QStringLiteral("stepChooser"));
    m_stepChooser->setToolTip(tr("The launch step shown below; steps run in this order"));
    const auto toolButton = [this](const QString &name, const QString &text, const QString &tip) {
        auto *b = new QToolButton(this);
        b->setObjectName(name);
        b->setText(text);
        b->setToolTip(tip);
        return b;
    };
    m_addStep = toolButton(QStringLiteral("addStep"), QStringLiteral("+"),
                           tr("Add a launch step after this one, for the kernel chosen below"));
    m_removeStep = toolButton(QStringLiteral("removeStep"), QStringLiteral("−"), tr("Remove this launch step"));
    m_moveUp = toolButton(QStringLiteral("moveStepUp"), QStringLiteral("↑"), tr("Run this step earlier"));
    m_moveDown = toolButton(QStringLiteral("moveStepDown"), QStringLiteral("↓"), tr("Run this step later"));
    auto *stepRow = new QHBoxLayout;
    stepRow->addWidget(m_stepChooser, 1);
    stepRow->addWidget(m_addStep);
    stepRow->addWidget(m_removeStep);
    stepRow->addWidget(m_moveUp);
    stepRow->addWidget(m_moveDown);
    form->addRow(tr("Launch step"), stepRow);
    m_form = form;
}

void LaunchPanel::buildStreamFields(QFormLayout *form)
{
    // Every kind of step runs on a stream and may wait for events first (docs/streams.md).
    m_stream = new QComboBox(this);
    m_stream->setObjectName(QStringLiteral("stepStream"));
    m_stream->setEditable(true);
    m_stream->setInsertPolicy(QComboBox::NoInsert);
    m_stream->setToolTip(tr("The stream this step runs on: \"default\" (a stream of the run's own), \"legacy\" "
                            "(the legacy default stream, which serialises with every other), a stream of the "
                            "project's \"streams\", or a new name"));
    m_stream->setProperty("defaultToolTip", m_stream->toolTip());
    form->addRow(tr("Stream"), m_stream);
    const auto commitStream = [this] {
        if (m_updating || m_step >= m_project.launches.size()) {
            return;
        }
        const QString text = m_stream->currentText().trimmed();
        if (text == m_project.launches[m_step].stream ||
            (text == QLatin1String("default") && m_project.launches[m_step].stream.isEmpty())) {
            return;
        }
        Q_EMIT streamChanged(m_step, text == QLatin1String("default") ? QString() : text);
    };
    connect(m_stream, &QComboBox::activated, this, [commitStream, this] { QTimer::singleShot(0, this, commitStream); });
    connect(m_stream->lineEdit(), &QLineEdit::editingFinished, this,
            [commitStream, this] { QTimer::singleShot(0, this, commitStream); });
    m_waitFor = new QLineEdit(this);
    m_waitFor->setObjectName(QStringLiteral("stepWaitFor"));
    m_waitFor->setPlaceholderText(tr("nothing: events, comma-separated"));
    m_waitFor->setToolTip(tr("Events this step's stream waits for before the step starts: names recorded by "
                             "\"record\" steps earlier in the list, comma-separated"));
    m_waitFor->setProperty("defaultToolTip", m_waitFor->toolTip());
    form->addRow(tr("Waits for"), m_waitFor);
    connect(m_waitFor, &QLineEdit::editingFinished, this, [this] {
        if (m_updating || m_step >= m_project.launches.size()) {
            return;
        }
        const QStringList names =
            m_waitFor->text().split(QRegularExpression(QStringLiteral("[,;\\s]+")), Qt::SkipEmptyParts);
        if (names == m_project.launches[m_step].waitFor) {
            return;
        }
        QJsonArray a;
        for (const QString &n : names) {
            a.append(n);
        }
        Q_EMIT edited(m_step, QStringLiteral("waitFor"),
                      names.isEmpty()     ? QJsonValue(QJsonValue::Undefined)
                      : names.size() == 1 ? QJsonValue(names.first())
                                          : QJsonValue(a));
    });
    connect(m_stepChooser, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (!m_updating && i >= 0) {
            m_step = i;
            setProject(m_project);
        }
    });
}

void LaunchPanel::connectStepButtons()
{
    connect(m_addStep, &QToolButton::clicked, this, [this] {
        const KernelInfo *k = findKernel(m_kernels, m_kernel->currentText().trimmed());
        if (!k && !m_kernels.isEmpty()) {
            k = &m_kernels.first();
        }
        if (!k) {
            m_message->setText(tr("No kernel to launch yet: the source has no __global__ function that compiles."));
            return;
        }
        Q_EMIT addStepRequested(LaunchEdits::defaultStep(*k, m_project));
    });
    // The other kinds of step, from the + button's menu.
    auto *addMenu = new QMenu(m_addStep);
    addMenu->setObjectName(QStringLiteral("addStepMenu"));
    addMenu->addAction(tr("Kernel launch"), m_addStep, &QToolButton::click);
    addMenu->addSeparator();
    const std::pair<QString, QString> otherKinds[] = {{QStringLiteral("copy-to-device"), tr("Copy host → device")},
                                                      {QStringLiteral("copy-to-host"), tr("Copy device → host")},
                                                      {QStringLiteral("memset"), tr("Memset")},
                                                      {QStringLiteral("record"), tr("Record an event")},
                                                      {QStringLiteral("wait"), tr("Wait for an event")}};
    for (const auto &[kind, text] : otherKinds) {
        QAction *a = addMenu->addAction(text, this, [this, kind = kind] {
            const Result<QJsonObject> step = LaunchEdits::defaultOtherStep(kind, m_project);
            if (!step) {
                m_message->setText(step.error().message);
                return;
            }
            Q_EMIT addStepRequested(step.value());
        });
        a->setObjectName(QStringLiteral("add-") + kind);
    }
    m_addStep->setMenu(addMenu);
    m_addStep->setPopupMode(QToolButton::MenuButtonPopup);
    connect(m_removeStep, &QToolButton::clicked, this, [this] {
        if (m_step < m_project.launches.size()) {
            Q_EMIT removeStepRequested(m_step);
        }
    });
    connect(m_moveUp, &QToolButton::clicked, this, [this] {
        if (m_step > 0) {
            Q_EMIT moveStepRequested(m_step, m_step - 1);
        }
    });
    connect(m_moveDown, &QToolButton::clicked, this, [this] {
        if (m_step + 1 < m_project.launches.size()) {
            Q_EMIT moveStepRequested(m_step, m_step + 1);
        }
    });
}

void LaunchPanel::buildKernelFields(QFormLayout *form)
{
    m_kernel = new QComboBox(this);
    m_kernel->setObjectName(QStringLiteral("kernelChooser"));
    m_kernel->setEditable(true); // template instances are typed: "matmul<16>"
    m_kernel->setInsertPolicy(QComboBox::NoInsert);
    m_kernel->setToolTip(tr("The kernel this step launches; type a template instance such as matmul<16>. "
                            "Choosing a kernel when there is no step yet adds one."));
    m_kernel->setProperty("defaultToolTip", m_kernel->toolTip());
    m_kernel->lineEdit()->setPlaceholderText(tr("choose the kernel to launch"));
    form->addRow(tr("Kernel"), m_kernel);
    // Committed when chosen or when typing ends, never per keystroke ("matmul<1" is no kernel).
    connect(m_kernel, &QComboBox::activated, this, [this] { QTimer::singleShot(0, this, &LaunchPanel::commitKernel); });
    connect(m_kernel->lineEdit(), &QLineEdit::editingFinished, this,
            [this] { QTimer::singleShot(0, this, &LaunchPanel::commitKernel); });

    // Grid items are often expressions ("ceil_div(width, block.x)"): one per
    // line, full width. Block items are short numbers: one line.
    const auto dimFields = [this](QLineEdit *fields[3], const QString &key) {
        for (int a = 0; a < 3; ++a) {
            fields[a] = new QLineEdit(this);
            fields[a]->setObjectName(QStringLiteral("%1_%2").arg(key, QLatin1String(kAxis[a])));
            fields[a]->setPlaceholderText(QStringLiteral("1"));
            fields[a]->setToolTip(key == QLatin1String("block")
                                      ? tr("Threads per block along %1: a number or an expression over the "
                                           "scalars. x·y·z is at most 1024 on every CUDA GPU.")
                                            .arg(QLatin1String(kAxis[a]))
                                      : tr("Blocks along %1: a number or an expression over the scalars, "
                                           "block.x/y/z and a.n/a.nx/a.ny of each buffer a, e.g. "
                                           "ceil_div(n, block.x)")
                                            .arg(QLatin1String(kAxis[a])));
            fields[a]->setProperty("defaultToolTip", fields[a]->toolTip());
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
        return grid;
    };
    m_blockRow = dimRow(tr("Block"), m_block, QStringLiteral("block"), false);
    m_gridRow = dimRow(tr("Grid"), m_grid, QStringLiteral("grid"), true);
    m_shared = new QLineEdit(this);
    m_shared->setObjectName(QStringLiteral("sharedBytes"));
    m_shared->setPlaceholderText(QStringLiteral("0"));
    m_shared->setToolTip(tr("Dynamic shared memory per block in bytes: a number or an expression"));
    m_shared->setProperty("defaultToolTip", m_shared->toolTip());
    form->addRow(tr("Dyn. shared (B)"), m_shared);
    connect(m_shared, &QLineEdit::editingFinished, this, [this] {
        if (!m_updating) {
            Q_EMIT edited(
                m_step, QStringLiteral("sharedBytes"),
                LaunchEdits::numberOrText(m_shared->text().isEmpty() ? QStringLiteral("0") : m_shared->text()));
        }
    });
    m_resolved = new QLabel(this);
    m_resolved->setObjectName(QStringLiteral("resolved"));
    m_resolved->setWordWrap(true);
    m_resolved->setToolTip(tr("What the grid and block expressions give with the current scalars and buffers"));
    form->addRow(tr("Resolves to"), m_resolved);
    keepWrappedHeight(m_resolved);
    m_occupancy = new QLabel(tr("run once to see occupancy"), this);
    m_occupancy->setObjectName(QStringLiteral("occupancy"));
    m_occupancy->setWordWrap(true);
    keepWrappedHeight(m_occupancy);
    m_occupancy->setToolTip(tr("Resident warps per multiprocessor for this block size, from the kernel's "
                               "registers and shared memory on the GPU of the last run, and what limits it"));
    form->addRow(tr("Occupancy"), m_occupancy);
}

void LaunchPanel::buildStepKindFields(QFormLayout *form)
{
    // Copies, memsets, events and chunk groups: the fields of each kind, shown for a step of that kind.
    const auto textField = [this, form](const QString &name, const QString &label, const QString &placeholder,
                                        const QString &tip, const QString &key, bool number) {
        auto *f = new QLineEdit(this);
        f->setObjectName(name);
        f->setPlaceholderText(placeholder);
        f->setToolTip(tip);
        f->setProperty("defaultToolTip", tip);
        form->addRow(label, f);
        connect(f, &QLineEdit::editingFinished, this, [this, f, key, number] {
            if (!m_updating && f->isModified()) {
                f->setModified(false);
                emitStepText(key, f->text(), number);
            }
        });
        return f;
    };
    m_stepBuffer = new QComboBox(this);
    m_stepBuffer->setObjectName(QStringLiteral("stepBuffer"));
    m_stepBuffer->setToolTip(tr("The buffer this step copies or sets"));
    m_stepBuffer->setProperty("defaultToolTip", m_stepBuffer->toolTip());
    form->addRow(tr("Buffer"), m_stepBuffer);
    connect(m_stepBuffer, &QComboBox::activated, this, [this] {
        if (!m_updating) {
            Q_EMIT edited(m_step, QStringLiteral("buffer"), m_stepBuffer->currentText());
        }
    });
    m_copyTo = new QComboBox(this);
    m_copyTo->setObjectName(QStringLiteral("copyDirection"));
    m_copyTo->addItem(tr("host → device"), QStringLiteral("device"));
    m_copyTo->addItem(tr("device → host"), QStringLiteral("host"));
    m_copyTo->setToolTip(tr("Which way the copy goes; copies use the pinned host buffer, so they overlap with "
                            "kernels on other streams"));
    m_copyTo->setProperty("defaultToolTip", m_copyTo->toolTip());
    form->addRow(tr("Direction"), m_copyTo);
    connect(m_copyTo, &QComboBox::activated, this, [this] {
        if (!m_updating) {
            Q_EMIT edited(m_step, QStringLiteral("to"), m_copyTo->currentData().toString());
        }
    });
    m_memsetValue = new QSpinBox(this);
    m_memsetValue->setObjectName(QStringLiteral("memsetValue"));
    m_memsetValue->setRange(0, 255);
    m_memsetValue->setToolTip(tr("The byte every byte of the range is set to (0 to 255), as cuMemsetD8 does"));
    m_memsetValue->setProperty("defaultToolTip", m_memsetValue->toolTip());
    form->addRow(tr("Byte value"), m_memsetValue);
    connect(m_memsetValue, &QSpinBox::editingFinished, this, [this] {
        if (!m_updating && m_step < m_project.launches.size() &&
            m_memsetValue->value() != m_project.launches[m_step].memsetValue) {
            Q_EMIT edited(m_step, QStringLiteral("value"), m_memsetValue->value());
        }
    });
    m_offset = textField(QStringLiteral("stepOffset"), tr("First element"), QStringLiteral("0"),
                         tr("The first element of the range: a number or an expression over the scalars; empty: 0 "
                            "(in a chunk group: chunk.offset)"),
                         QStringLiteral("offset"), true);
    m_count = textField(QStringLiteral("stepCount"), tr("Elements"), tr("to the end"),
                        tr("How many elements: a number or an expression; empty: to the end of the buffer (in a "
                           "chunk group: chunk.n)"),
                        QStringLiteral("count"), true);
    m_event = textField(QStringLiteral("stepEvent"), tr("Event"), tr("a name, e.g. produced"),
                        tr("The event recorded once the work queued on this stream so far is done; other steps "
                           "wait for it by name"),
                        QStringLiteral("event"), false);
    m_chunkCount = textField(QStringLiteral("chunkCount"), tr("Chunks"), QStringLiteral("4"),
                             tr("How many chunks the elements are split into: a number or an expression (a scalar "
                                "a sweep can vary)"),
                             QStringLiteral("count"), true);
    m_chunkStreams = textField(QStringLiteral("chunkStreams"), tr("Streams"), QStringLiteral("1"),
                               tr("Chunk i runs on stream NAME.(i % streams): a number or an expression"),
                               QStringLiteral("streams"), true);
    m_chunkElements =
        textField(QStringLiteral("chunkElements"), tr("Split elements"), QStringLiteral("n"),
                  tr("How many elements the chunks split between them, e.g. n"), QStringLiteral("elements"), true);
    m_chunkName = textField(QStringLiteral("chunkName"), tr("Stream name"), QStringLiteral("chunk"),
                            tr("The generated streams' name: NAME.0, NAME.1, ..."), QStringLiteral("name"), false);
    m_chunkSteps = new QLabel(this);
    m_chunkSteps->setObjectName(QStringLiteral("chunkSteps"));
    m_chunkSteps->setWordWrap(true);
    m_chunkSteps->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_chunkSteps->setToolTip(tr("The steps run for every chunk, with chunk.offset and chunk.n as their range; "
                                "they are edited in the project file (\"steps\" of the chunks step)"));
    form->addRow(tr("Per chunk"), m_chunkSteps);
}

void LaunchPanel::buildRepeat(QFormLayout *form)
{
    // Repeat: the steps run this many times, exchanging buffers between repetitions (time stepping).
    m_repeat = new QSpinBox(this);
    m_repeat->setObjectName(QStringLiteral("repeatCount"));
    m_repeat->setRange(1, 1000000);
    m_repeat->setSuffix(tr(" ×"));
    m_repeat->setToolTip(tr("How many times the launch steps run, one after another, in each run"));
    m_swaps = new QLineEdit(this);
    m_swaps->setObjectName(QStringLiteral("swaps"));
    m_swaps->setPlaceholderText(tr("swap after each: t ↔ t_next"));
    m_swaps->setToolTip(tr("Buffers exchanged after each repetition, as pairs: \"t ↔ t_next, u ↔ v\" "
                           "(or \"t t_next\", \"t<->t_next\"); both of a pair have the same dtype and shape"));
    m_swaps->setProperty("defaultToolTip", m_swaps->toolTip());
    auto *repeatRow = new QHBoxLayout;
    repeatRow->addWidget(m_repeat);
    repeatRow->addWidget(m_swaps, 1);
    form->addRow(tr("Repeat"), repeatRow);
    connect(m_repeat, &QSpinBox::editingFinished, this, &LaunchPanel::emitRepeat);
    connect(m_swaps, &QLineEdit::editingFinished, this, &LaunchPanel::emitRepeat);
}

void LaunchPanel::buildArguments(QVBoxLayout *layout)
{
    m_args = new QTableWidget(0, 3, this);
    m_args->setObjectName(QStringLiteral("arguments"));
    m_args->setHorizontalHeaderLabels({tr("Parameter"), tr("Type"), tr("Bound to")});
    m_args->horizontalHeader()->setStretchLastSection(true);
    m_args->verticalHeader()->hide();
    m_args->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_args->setMinimumHeight(120);
    layout->addWidget(m_args, 1);

    m_createMissing = new QPushButton(this);
    m_createMissing->setObjectName(QStringLiteral("createMissing"));
    m_createMissing->setToolTip(tr("Adds a buffer for each unbound pointer and a scalar for each unbound value, "
                                   "named and typed after the parameter, and binds them"));
    m_createMissing->hide();
    layout->addWidget(m_createMissing);
    connect(m_createMissing, &QPushButton::clicked, this, [this] { Q_EMIT createMissingRequested(m_step, {}); });

    m_message = new QLabel(this);
    m_message->setObjectName(QStringLiteral("launchMessage"));
    m_message->setWordWrap(true);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_message);
}

void LaunchPanel::buildTiming(QVBoxLayout *layout)
{
    auto *timing = new QHBoxLayout;
    m_timingMode = new QComboBox(this);
    m_timingMode->setObjectName(QStringLiteral("timingMode"));
    m_timingMode->addItem(tr("cold (L2 flushed)"), QStringLiteral("cold"));
    m_timingMode->addItem(tr("hot (batched)"), QStringLiteral("hot"));
    m_timingMode->addItem(tr("off (run once)"), QStringLiteral("off"));
    m_timingMode->setToolTip(tr("cold: the L2 cache is flushed before each sample, as for data seen the first "
                                "time; hot: batches of back-to-back launches; off: one untimed run"));
    m_minSamples = new QSpinBox(this);
    m_minSamples->setObjectName(QStringLiteral("minSamples"));
    m_minSamples->setRange(1, 100000);
    m_minSamples->setPrefix(tr("≥ "));
    m_minSamples->setSuffix(tr(" samples"));
    m_minSamples->setToolTip(tr("Timing takes at least this many samples, then goes on until the noise is low "
                                "enough or the time is up"));
    auto *timingLabel = new QLabel(tr("Timing"), this);
    timingLabel->setToolTip(m_timingMode->toolTip());
    timing->addWidget(timingLabel);
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
}

void LaunchPanel::buildButtons(QVBoxLayout *layout)
{
    auto *buttons = new QHBoxLayout;
    m_run = new QPushButton(tr("Run"), this);
    m_run->setObjectName(QStringLiteral("run"));
    m_abort = new QPushButton(tr("Abort"), this);
    m_abort->setObjectName(QStringLiteral("abort"));
    m_abort->setEnabled(false);
    m_abort->setToolTip(tr("Stop the run in flight (Esc); the buffers keep their contents from before it"));
    m_play = new QPushButton(tr("Play"), this);
    m_play->setObjectName(QStringLiteral("play"));
    m_play->setCheckable(true);
    m_stepOnce = new QPushButton(tr("Step"), this);
    m_stepOnce->setObjectName(QStringLiteral("stepOnce"));
    buttons->addWidget(m_run, 1);
    buttons->addWidget(m_abort);
    buttons->addWidget(m_play);
    buttons->addWidget(m_stepOnce);
    layout->addLayout(buttons);
    setRunAvailable(true, {});
    connect(m_run, &QPushButton::clicked, this, &LaunchPanel::runRequested);
    connect(m_abort, &QPushButton::clicked, this, &LaunchPanel::abortRequested);
    connect(m_play, &QPushButton::toggled, this, [this](bool on) {
        m_play->setText(on ? tr("Pause") : tr("Play"));
        Q_EMIT playToggled(on);
    });
    connect(m_stepOnce, &QPushButton::clicked, this, &LaunchPanel::stepRequested);
}

void LaunchPanel::setCurrentStep(int step)
{
    m_step = step;
    setProject(m_project);
}

void LaunchPanel::setProject(const Project &project)
{
    m_updating = true;
    m_project = project;
    m_stepChooser->clear();
    for (qsizetype i = 0; i < project.launches.size(); ++i) {
        m_stepChooser->addItem(tr("%1 of %2: %3")
                                   .arg(i + 1)
                                   .arg(project.launches.size())
                                   .arg(LaunchEdits::stepTitle(project.launches[i])));
        // The whole title when the panel is too narrow to show it.
        m_stepChooser->setItemData(int(i), LaunchEdits::stepTitle(project.launches[i]), Qt::ToolTipRole);
    }
    if (project.launches.isEmpty()) {
        m_stepChooser->addItem(tr("none yet: choose a kernel below"));
    }
    m_step = qBound(0, m_step, int(qMax<qsizetype>(0, project.launches.size() - 1)));
    m_stepChooser->setCurrentIndex(m_step);
    m_stepChooser->setEnabled(project.launches.size() > 1);
    m_removeStep->setEnabled(!project.launches.isEmpty());
    m_moveUp->setEnabled(m_step > 0);
    m_moveDown->setEnabled(m_step + 1 < project.launches.size());
    const bool has = !project.launches.isEmpty();
    const LaunchStep step = has ? project.launches[m_step] : LaunchStep{};
    if (m_kernel->findText(step.kernel) < 0 && !step.kernel.isEmpty()) {
        m_kernel->addItem(step.kernel);
    }
    m_kernel->setCurrentText(step.kernel);
    for (int a = 0; a < 3; ++a) {
        m_grid[a]->setText(step.grid.value(a));
        m_block[a]->setText(step.block.value(a));
        m_grid[a]->setEnabled(has);
        m_block[a]->setEnabled(has);
    }
    m_shared->setEnabled(has);
    m_shared->setText(step.sharedBytes == QLatin1String("0") ? QString() : step.sharedBytes);
    showStepKind(step, has);
    m_repeat->setValue(project.repeat.count);
    QStringList pairs;
    for (const auto &pair : project.repeat.swaps) {
        pairs << QStringLiteral("%1 ↔ %2").arg(pair.first, pair.second);
    }
    m_swaps->setText(pairs.join(QStringLiteral(", ")));
    const TimingSpec &t = project.timing;
    m_timingMode->setCurrentIndex(!t.enabled ? 2 : t.mode == TimingSpec::Mode::Hot ? 1 : 0);
    m_minSamples->setValue(t.minSamples);
    m_updating = false;
    rebuildArgs();
    if (m_step != m_announcedStep) {
        m_announcedStep = m_step;
        Q_EMIT currentStepChanged(m_step);
    }
}

bool LaunchPanel::isRowShown(QWidget *field) const
{
    QFormLayout::ItemRole role;
    int row = -1;
    m_form->getWidgetPosition(field, &row, &role);
    if (row < 0) {
        return false;
    }
    const QLayoutItem *label = m_form->itemAt(row, QFormLayout::LabelRole);
    return label && label->widget() && !label->widget()->isHidden();
}

void LaunchPanel::emitStepText(const QString &key, const QString &text, bool number)
{
    const QString t = text.trimmed();
    Q_EMIT edited(m_step, key,
                  t.isEmpty() ? QJsonValue(QJsonValue::Undefined)
                  : number    ? LaunchEdits::numberOrText(t)
                              : QJsonValue(t));
}

void LaunchPanel::showStepKind(const LaunchStep &step, bool has)
{
    using K = LaunchStep::Kind;
    const K kind = has ? step.kind : K::Kernel;
    const bool kernel = kind == K::Kernel;
    const bool ranged = kind == K::Copy || kind == K::Memset;
    const bool chunks = kind == K::Chunks;
    m_form->setRowVisible(m_kernel, kernel);
    m_form->setRowVisible(m_blockRow, kernel);
    m_form->setRowVisible(m_gridRow, kernel);
    m_form->setRowVisible(m_shared, kernel);
    m_form->setRowVisible(m_resolved, kernel);
    m_form->setRowVisible(m_occupancy, kernel);
    m_args->setVisible(kernel);
    m_form->setRowVisible(m_stream, has && !chunks);
    m_form->setRowVisible(m_waitFor, has); // a wait step is nothing but this field
    m_form->setRowVisible(m_stepBuffer, ranged);
    m_form->setRowVisible(m_copyTo, kind == K::Copy);
    m_form->setRowVisible(m_memsetValue, kind == K::Memset);
    m_form->setRowVisible(m_offset, ranged);
    m_form->setRowVisible(m_count, ranged);
    m_form->setRowVisible(m_event, kind == K::Record);
    for (QWidget *w : {static_cast<QWidget *>(m_chunkCount), static_cast<QWidget *>(m_chunkStreams),
                       static_cast<QWidget *>(m_chunkElements), static_cast<QWidget *>(m_chunkName),
                       static_cast<QWidget *>(m_chunkSteps)}) {
        m_form->setRowVisible(w, chunks);
    }

    // The streams on offer: the built-in two, the project's, and any a step names.
    QStringList streams{QStringLiteral("default"), QStringLiteral("legacy")};
    for (const StreamSpec &sp : m_project.streams) {
        streams << sp.name;
    }
    for (const LaunchStep &l : m_project.launches) {
        if (!l.stream.isEmpty() && !streams.contains(l.stream)) {
            streams << l.stream;
        }
    }
    m_stream->clear();
    m_stream->addItems(streams);
    m_stream->setCurrentText(step.stream.isEmpty() ? QStringLiteral("default") : step.stream);
    m_waitFor->setText(step.waitFor.join(QStringLiteral(", ")));
    m_stepBuffer->clear();
    for (const BufferSpec &b : m_project.buffers) {
        m_stepBuffer->addItem(b.name);
    }
    if (ranged && m_stepBuffer->findText(step.buffer) < 0) {
        m_stepBuffer->addItem(step.buffer);
    }
    m_stepBuffer->setCurrentText(step.buffer);
    m_copyTo->setCurrentIndex(step.toDevice ? 0 : 1);
    m_memsetValue->setValue(step.memsetValue);
    // In a chunk group an empty range means the chunk's own.
    m_offset->setText(step.offset);
    m_count->setText(kind == K::Chunks ? QString() : step.count);
    m_event->setText(step.event);
    m_chunkCount->setText(chunks ? step.chunkCount : QString());
    m_chunkStreams->setText(step.chunkStreams);
    m_chunkElements->setText(step.elements);
    m_chunkName->setText(step.groupName);
    QStringList inner;
    for (qsizetype i = 0; i < step.steps.size(); ++i) {
        inner << QStringLiteral("%1. %2").arg(i + 1).arg(LaunchEdits::stepTitle(step.steps[i]));
    }
    m_chunkSteps->setText(inner.join(QLatin1Char('\n')));
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

void LaunchPanel::commitKernel()
{
    if (m_updating) {
        return;
    }
    const QString text = m_kernel->currentText().trimmed();
    if (text.isEmpty()) {
        return;
    }
    if (m_project.launches.isEmpty()) {
        // A bare kernel: choosing it is how its first launch step is made.
        if (const KernelInfo *k = findKernel(m_kernels, text)) {
            Q_EMIT addStepRequested(LaunchEdits::defaultStep(*k, m_project));
        }
        return;
    }
    const LaunchStep &step = m_project.launches[m_step];
    if (text == step.kernel) {
        return;
    }
    // Bindings follow the parameters' names, not their positions: a kernel
    // taking (s, b) keeps b bound to b and s to s.
    const KernelInfo *oldKernel = findKernel(m_kernels, step.kernel);
    const KernelInfo *newKernel = findKernel(m_kernels, text);
    if (!newKernel) {
        Q_EMIT edited(m_step, QStringLiteral("kernel"), text);
        return;
    }
    const QMap<QString, QJsonValue> old = bindingsByName(step, oldKernel);
    QMap<QString, QJsonValue> bound;
    for (const KernelParam &p : newKernel->params) {
        if (p.name.isEmpty()) {
            continue;
        }
        const bool pointer = p.category == KernelParam::Category::Pointer;
        if (old.contains(p.name)) {
            bound.insert(p.name, old.value(p.name));
        } else if (pointer ? m_project.buffer(p.name) != nullptr : m_project.scalar(p.name) != nullptr) {
            bound.insert(p.name, p.name);
        }
    }
    const bool byName = !step.args.isEmpty() && !step.args.first().param.isEmpty();
    Q_EMIT kernelChanged(m_step, text, LaunchEdits::args(*newKernel, bound, byName));
}

QMap<QString, QJsonValue> LaunchPanel::bindingsByName(const LaunchStep &step, const KernelInfo *kernel) const
{
    QMap<QString, QJsonValue> out;
    for (qsizetype i = 0; i < step.args.size(); ++i) {
        const ArgBinding &b = step.args[i];
        const QString name = !b.param.isEmpty()                    ? b.param
                             : kernel && i < kernel->params.size() ? kernel->params[i].name
                                                                   : QString();
        if (!name.isEmpty()) {
            out.insert(name, argBindingJson(b));
        }
    }
    return out;
}

QStringList LaunchPanel::unboundParams() const
{
    if (m_project.launches.isEmpty()) {
        return {};
    }
    const LaunchStep &step = m_project.launches[m_step];
    const KernelInfo *kernel = findKernel(m_kernels, step.kernel);
    if (!kernel) {
        return {};
    }
    const QMap<QString, QJsonValue> bound = bindingsByName(step, kernel);
    QStringList out;
    for (const KernelParam &p : kernel->params) {
        if (!p.name.isEmpty() && !bound.contains(p.name) && LaunchEdits::canCreateFor(p)) {
            out << p.name;
        }
    }
    return out;
}

void LaunchPanel::updateCreateMissing()
{
    const QStringList missing = unboundParams();
    m_createMissing->setVisible(!missing.isEmpty());
    m_createMissing->setText(tr("Create and bind: %1").arg(missing.join(QStringLiteral(", "))));
}

void LaunchPanel::emitRepeat()
{
    if (m_updating) {
        return;
    }
    QJsonArray swaps;
    static const QRegularExpression pairRe(QStringLiteral(R"(^\s*(\w+)\s*(?:<->|↔|:|\s)\s*(\w+)\s*$)"));
    const QString text = m_swaps->text().trimmed();
    for (const QString &part : text.split(QRegularExpression(QStringLiteral("[,;]")), Qt::SkipEmptyParts)) {
        const auto m = pairRe.match(part);
        if (!m.hasMatch()) {
            markField(m_swaps,
                      tr("repeat, swap: '%1' is not a pair of buffer names; write \"t ↔ t_next\"").arg(part.trimmed()));
            m_message->setText(m_swaps->toolTip());
            return;
        }
        swaps.append(QJsonArray{m.captured(1), m.captured(2)});
    }
    markField(m_swaps, QString());
    QJsonObject repeat{{QStringLiteral("count"), m_repeat->value()}};
    if (!swaps.isEmpty()) {
        repeat.insert(QStringLiteral("swap"), swaps);
    }
    Q_EMIT repeatEdited(repeat);
}

QString LaunchPanel::bindingText(const ArgBinding &b) const
{
    switch (b.kind) {
    case ArgBinding::Kind::Buffer: return b.offset ? QStringLiteral("%1+%2").arg(b.name).arg(b.offset) : b.name;
    case ArgBinding::Kind::Scalar: return b.name;
    case ArgBinding::Kind::Texture: return b.texture.describe(); // shown read-only (rebuildArgs)
    case ArgBinding::Kind::Literal:
        // What the project file says, in a form argJsonFor() reads back: a
        // struct or vector value, null or an expression is never shown as a number.
        if (b.null) {
            return QStringLiteral("null");
        }
        if (b.isAggregate() || !b.expression.isEmpty()) {
            const QJsonValue v = argBindingJson(b);
            return v.isString()   ? v.toString()
                   : v.isObject() ? v.toObject().value(QStringLiteral("value")).toString()
                                  : QString::fromUtf8(QJsonDocument(v.toArray()).toJson(QJsonDocument::Compact));
        }
        // The shortest text that reads back as the same double: 0.1, never 0.10000000000000001.
        return QString::number(b.value, 'g', QLocale::FloatingPointShortest);
    }
    return {};
}

QJsonValue LaunchPanel::argJsonFor(const ArgBinding *current, const QString &text) const
{
    // Unchanged: exactly what the project had (an expression or a struct value stays one).
    if (current && bindingText(*current) == text) {
        return argBindingJson(*current);
    }
    if (text.startsWith(QLatin1Char('['))) {
        QJsonParseError error{};
        const QJsonDocument d = QJsonDocument::fromJson(text.toUtf8(), &error);
        if (error.error == QJsonParseError::NoError && d.isArray()) {
            return d.array(); // a vector or struct value, member by member
        }
    }
    if (text.startsWith(QLatin1Char('{'))) {
        QJsonParseError error{};
        const QJsonDocument d = QJsonDocument::fromJson(text.toUtf8(), &error);
        if (error.error == QJsonParseError::NoError && d.isObject()) {
            return d.object(); // {"texture": "img", ...}: the project reader checks it
        }
    }
    if (text == QLatin1String("null") && !m_project.buffer(text) && !m_project.scalar(text)) {
        return QJsonValue(QJsonValue::Null);
    }
    return LaunchEdits::numberOrText(text);
}

const ArgBinding *LaunchPanel::bindingAt(const LaunchStep &step, const KernelInfo *kernel, int row) const
{
    if (kernel && row < kernel->params.size() && !kernel->params[row].name.isEmpty()) {
        for (const ArgBinding &b : step.args) {
            if (b.param == kernel->params[row].name) {
                return &b;
            }
        }
    }
    return row < step.args.size() && step.args[row].param.isEmpty() ? &step.args[row] : nullptr;
}

QComboBox *LaunchPanel::bindingEditor(int row) const
{
    return qobject_cast<QComboBox *>(m_args->cellWidget(row, 2));
}

void LaunchPanel::rebuildArgs()
{
    updateCreateMissing();
    if (m_project.launches.isEmpty()) {
        m_args->setRowCount(0);
        m_argsKey.clear();
        return;
    }
    const LaunchStep &step = m_project.launches[m_step];
    const KernelInfo *kernel = findKernel(m_kernels, step.kernel); // as the run will find it
    // One row per parameter of the kernel as it is now; bindings by position,
    // or by name when the project binds by name. Extra bindings get rows too.
    const int params = kernel ? int(kernel->params.size()) : 0;
    const bool byName = !step.args.isEmpty() && !step.args.first().param.isEmpty();
    const int rows = byName ? params : qMax(params, int(step.args.size()));
    const auto bindingFor = [&](int r) -> QString {
        if (byName) {
            for (const ArgBinding &x : step.args) {
                if (r < params && x.param == kernel->params[r].name) {
                    return bindingText(x);
                }
            }
            return {};
        }
        return r < step.args.size() ? bindingText(step.args[r]) : QString();
    };
    // A texture or surface binding is shown in words, read-only: the project file holds its options.
    const auto textureAt = [&](int r) -> const ArgBinding * {
        const ArgBinding *b = kernel && r < params              ? bindingAt(step, kernel, r)
                              : !byName && r < step.args.size() ? &step.args[r]
                                                                : nullptr;
        return b && b->kind == ArgBinding::Kind::Texture ? b : nullptr;
    };
    // The rows' widgets are rebuilt only when the signature or the names on
    // offer change; a changed binding only updates its text, so the editor
    // the user is in (or tabs to) survives an edit of its neighbour.
    QStringList key;
    key << QString::number(m_step);
    for (int r = 0; r < params; ++r) {
        key << kernel->params[r].name + QLatin1Char(':') + kernel->params[r].type;
    }
    key << QString::number(rows) << unboundParams().join(QLatin1Char(','));
    for (int r = 0; r < rows; ++r) {
        if (const ArgBinding *t = textureAt(r)) {
            key << QStringLiteral("texture %1 ").arg(r) + t->texture.describe();
        }
    }
    for (const BufferSpec &b : m_project.buffers) {
        key << QStringLiteral("buffer ") + b.name + QLatin1Char(' ') + dtypeName(b.dtype);
    }
    for (const ScalarSpec &s : m_project.scalars) {
        key << QStringLiteral("scalar ") + s.name + QLatin1Char(' ') + dtypeName(s.type);
    }
    const QString signature = key.join(QLatin1Char('\n'));
    if (signature == m_argsKey && m_args->rowCount() == rows) {
        m_updating = true;
        for (int r = 0; r < rows; ++r) {
            if (QComboBox *combo = bindingEditor(r); combo && combo->currentText() != bindingFor(r)) {
                combo->setCurrentText(bindingFor(r));
                showStart(combo);
            }
        }
        m_updating = false;
        return;
    }
    m_argsKey = signature;
    const QStringList unbound = unboundParams();
    m_updating = true;
    m_args->setRowCount(rows);
    for (int r = 0; r < rows; ++r) {
        const KernelParam *p = r < params ? &kernel->params[r] : nullptr;
        m_args->setItem(r, 0, new QTableWidgetItem(p ? p->name : tr("(extra)")));
        m_args->setItem(r, 1, new QTableWidgetItem(p ? p->type : QString()));
        auto *combo = new QComboBox(m_args);
        combo->setEditable(true);
        combo->setInsertPolicy(QComboBox::NoInsert);
        // What fits the parameter first: buffers of its element type for a
        // pointer, scalars of its type for a value; then a new one named after
        // it; then the rest, which the run may refuse or warn about.
        const std::optional<DType> wantOpt = p ? dtypeForCudaType(p->baseType) : std::nullopt;
        const bool hasWant = wantOpt.has_value();
        const DType wantType = wantOpt.value_or(DType::Float32);
        const bool pointer = !p || p->category == KernelParam::Category::Pointer;
        const bool value = !p || p->category != KernelParam::Category::Pointer;
        QStringList fit, rest;
        if (pointer) {
            for (const BufferSpec &b : m_project.buffers) {
                (hasWant && wantType == b.dtype ? fit : rest) << b.name;
            }
        }
        if (value) {
            for (const ScalarSpec &s : m_project.scalars) {
                (hasWant && wantType == s.type ? fit : rest) << s.name;
            }
        }
        combo->addItems(fit);
        if (p && unbound.contains(p->name)) {
            const QString what = pointer ? tr("new buffer %1 (%2)") : tr("new scalar %1 (%2)");
            combo->addItem(what.arg(p->name, dtypeName(wantType)), kNewEntry);
        }
        if (!rest.isEmpty()) {
            if (combo->count() > 0) {
                combo->insertSeparator(combo->count());
            }
            combo->addItems(rest);
        }
        combo->setCurrentText(bindingFor(r));
        showStart(combo);
        const QString typeName = hasWant ? dtypeName(wantType) : (p ? p->baseType : QString());
        // A struct or vector passed by value takes a braced value, not a number.
        const bool aggregate = p && !pointer && (!hasWant || dtypeInfo(wantType).components > 1);
        const QString valueType = p ? p->baseType : QString();
        combo->setToolTip(
            pointer && value ? tr("A buffer (a+16 for an element offset), a scalar, or a number")
            : pointer        ? tr("A buffer of %1 (a+16 for an element offset); Enter commits").arg(typeName)
            : aggregate ? tr("A %1 value: \"%1 {1, 2}\" or [1, 2], its members in declaration order (nested braces "
                             "allowed); Enter commits")
                              .arg(valueType)
                        : tr("A scalar of %1 or a number; Enter commits").arg(typeName));
        if (const ArgBinding *t = textureAt(r)) {
            combo->setEnabled(false);
            // The start of "texture over img (array, ...)" says what it is; a narrow column showed its end.
            if (QLineEdit *edit = combo->lineEdit()) {
                edit->setCursorPosition(0);
            }
            combo->setToolTip(
                tr("%1, made by the run over the buffer; change it in the project file: %2")
                    .arg(t->texture.describe(),
                         QString::fromUtf8(QJsonDocument(t->texture.toJson()).toJson(QJsonDocument::Compact))));
        } else if (p && !pointer &&
                   (p->baseType.contains(QLatin1String("TextureObject")) ||
                    p->baseType.contains(QLatin1String("SurfaceObject")))) {
            combo->setToolTip(tr("A texture or surface object over a buffer: {\"texture\": \"img\"} or "
                                 "{\"surface\": \"img\"} (docs/buffers.md); Enter commits"));
        }
        const QString param = p ? p->name : QString();
        // Committed on Enter, on leaving the field or on a choice from the
        // list, never per keystroke: "1." is not yet "1.5".
        connect(combo, &QComboBox::activated, this, [this, combo, param](int index) {
            if (m_updating) {
                return;
            }
            if (combo->itemData(index).toString() == kNewEntry) {
                QTimer::singleShot(0, this, [this, param] { Q_EMIT createMissingRequested(m_step, {param}); });
                return;
            }
            QTimer::singleShot(0, this, &LaunchPanel::emitArgs);
        });
        connect(combo->lineEdit(), &QLineEdit::editingFinished, this, [this] {
            if (!m_updating) {
                QTimer::singleShot(0, this, &LaunchPanel::emitArgs);
            }
        });
        m_args->setCellWidget(r, 2, combo);
    }
    m_updating = false;
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
        items.append(LaunchEdits::numberOrText(t.isEmpty() ? QStringLiteral("1") : t));
    }
    Q_EMIT edited(m_step, key, items);
}

void LaunchPanel::emitArgs()
{
    if (m_updating || m_project.launches.isEmpty()) {
        return;
    }
    const LaunchStep &step = m_project.launches[m_step];
    const KernelInfo *kernel = findKernel(m_kernels, step.kernel);
    const bool byName = !step.args.isEmpty() && !step.args.first().param.isEmpty();
    const auto textAt = [this](int r) {
        return bindingEditor(r) ? bindingEditor(r)->currentText().trimmed() : QString();
    };
    if (kernel && m_args->rowCount() == kernel->params.size()) {
        // By parameter: a row left empty is a gap, not a shift of every row below it.
        QMap<QString, QJsonValue> bound;
        bool named = true;
        for (int r = 0; r < m_args->rowCount(); ++r) {
            named = named && !kernel->params[r].name.isEmpty();
            if (!textAt(r).isEmpty()) {
                bound.insert(kernel->params[r].name, argJsonFor(bindingAt(step, kernel, r), textAt(r)));
            }
        }
        if (named) {
            Q_EMIT edited(m_step, QStringLiteral("args"), LaunchEdits::args(*kernel, bound, byName));
            return;
        }
    }
    QJsonArray args;
    for (int r = 0; r < m_args->rowCount(); ++r) {
        if (!textAt(r).isEmpty()) {
            args.append(argJsonFor(bindingAt(step, kernel, r), textAt(r)));
        }
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
        markField(m_block[a],
                  at(QStringLiteral(".block[%1]").arg(a)) || at(QStringLiteral(".block")) ? error : QString());
    }
    markField(m_shared, at(QStringLiteral(".sharedBytes")) ? error : QString());
    markField(m_kernel, at(QStringLiteral(".kernel")) ? error : QString());
    const bool chunks =
        m_step < m_project.launches.size() && m_project.launches[m_step].kind == LaunchStep::Kind::Chunks;
    const std::pair<QWidget *, const char *> stepFields[] = {{m_stream, ".stream"},
                                                             {m_stepBuffer, ".buffer"},
                                                             {m_copyTo, ".to"},
                                                             {m_memsetValue, ".value"},
                                                             {m_offset, ".offset"},
                                                             {m_count, chunks ? "" : ".count"},
                                                             {m_event, ".event"},
                                                             {m_chunkCount, chunks ? ".count" : ""},
                                                             {m_chunkStreams, ".streams"},
                                                             {m_chunkElements, ".elements"},
                                                             {m_chunkName, ".name"}};
    for (const auto &[w, key] : stepFields) {
        markField(w, *key && at(QLatin1String(key)) ? error : QString());
    }
    markField(m_waitFor, at(QStringLiteral(".waitFor")) || errorPath.startsWith(prefix + QStringLiteral(".waitFor["))
                             ? error
                             : QString());
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
    // One message at a time: the error, else the warnings (a launch too big
    // for the GPU is also bigger than its buffers; the limit is what to fix).
    const QString text = error.isEmpty() ? warnings.join(QLatin1Char('\n')) : error;
    m_message->setText(text);
    m_message->setStyleSheet(error.isEmpty() ? QString() : QStringLiteral("color: #d73a49;"));
    // While a grid or block field of this step is wrong, the numbers from
    // before it are not what the fields say: nothing is shown rather than stale values.
    const bool shapeWrong = !error.isEmpty() && (errorPath.startsWith(prefix + QStringLiteral(".grid")) ||
                                                 errorPath.startsWith(prefix + QStringLiteral(".block")));
    m_resolved->setText(shapeWrong ? tr("— (fix the marked field)") : resolved);
    fitWrappedHeight(m_resolved);
    m_valid = error.isEmpty();
    setRunning(m_running);
}

void LaunchPanel::setOccupancy(const QString &text)
{
    m_occupancy->setText(text);
    fitWrappedHeight(m_occupancy);
}

void LaunchPanel::setRunning(bool running)
{
    m_running = running;
    m_abort->setEnabled(running);
    m_run->setEnabled(!running && m_valid && m_runAvailable);
    m_stepOnce->setEnabled(!running && m_valid && m_runAvailable);
    // Play stays pressable while its frames run: pressing it again pauses.
    m_play->setEnabled(m_runAvailable && (m_valid || m_play->isChecked()));
}

void LaunchPanel::setRunAvailable(bool available, const QString &why)
{
    m_runAvailable = available;
    m_runUnavailable = why;
    const QString suffix = available ? QString() : QStringLiteral("\n\n") + why;
    m_run->setToolTip(tr("Compile, fill the buffers from their initial contents and run the launch steps, "
                         "timed as Timing says (Ctrl+Enter)") +
                      suffix);
    m_play->setToolTip(tr("Run the steps again and again without re-initialising the buffers (time-stepping "
                          "kernels), refreshing the inspector after each run") +
                       suffix);
    m_stepOnce->setToolTip(tr("Run the steps once more, untimed, continuing from the buffers' current contents") +
                           suffix);
    setRunning(m_running);
}

void LaunchPanel::stopPlaying()
{
    const QSignalBlocker block(m_play);
    m_play->setChecked(false);
    m_play->setText(tr("Play"));
    setRunning(m_running);
}

void LaunchPanel::setDocument(ProjectDocument *doc)
{
    const auto showValidation = [this, doc] {
        const Validation &v = doc->validation();
        const int step = qBound(0, m_step, int(v.resolved.size()) - 1);
        // What the grid and block resolve to stays shown when something unrelated (a binding) is wrong.
        // "Not checked yet" is shown as a warning is: no red, Run stays (a run compiles first).
        setValidation(v.error ? panelMessage(*v.error, doc->project()) : QString(), v.error ? v.error->path : QString(),
                      v.pending.isEmpty() ? v.warnings : QStringList{v.pending}, v.resolved.value(step));
    };
    const auto refused = [this, doc](const Status &s) {
        if (!s) {
            // The refused edit changed nothing: what the launch resolves to is still true.
            setValidation(panelMessage(s.error(), doc->project()), s.error().path, {},
                          doc->validation().resolved.value(m_step));
        }
    };
    connect(doc, &ProjectDocument::projectChanged, this, [this, doc] { setProject(doc->project()); });
    connect(doc, &ProjectDocument::validationChanged, this, showValidation);
    connect(this, &LaunchPanel::edited, doc, [doc, refused](int step, const QString &key, const QJsonValue &value) {
        refused(doc->editLaunch(step, key, value));
    });
    connect(this, &LaunchPanel::timingEdited, doc,
            [doc, refused](const QString &key, const QJsonValue &value) { refused(doc->editTiming(key, value)); });
    connect(this, &LaunchPanel::kernelChanged, doc,
            [doc, refused](int step, const QString &kernel, const QJsonValue &args) {
                refused(doc->edit(tr("Set kernel of step %1").arg(step + 1), [&](QJsonObject &o) {
                    QJsonArray launches = o.value(QStringLiteral("launches")).toArray();
                    if (step >= 0 && step < launches.size()) {
                        QJsonObject l = launches[step].toObject();
                        l.insert(QStringLiteral("kernel"), kernel);
                        l.insert(QStringLiteral("args"), args);
                        launches[step] = l;
                        o.insert(QStringLiteral("launches"), launches);
                    }
                }));
            });
    connect(this, &LaunchPanel::addStepRequested, doc, [this, doc, refused](const QJsonObject &step) {
        const int at = doc->project().launches.isEmpty() ? 0 : m_step + 1;
        m_step = at; // the new step is shown once the document has it
        const QString what = step.contains(QStringLiteral("kernel")) ? step.value(QStringLiteral("kernel")).toString()
                                                                     : step.value(QStringLiteral("kind")).toString();
        refused(doc->edit(tr("Add launch step %1").arg(what), [&](QJsonObject &o) {
            QJsonArray launches = o.value(QStringLiteral("launches")).toArray();
            launches.insert(qMin<qsizetype>(at, launches.size()), step);
            o.insert(QStringLiteral("launches"), launches);
        }));
    });
    connect(this, &LaunchPanel::removeStepRequested, doc, [doc, refused](int step) {
        refused(doc->edit(tr("Remove launch step %1").arg(step + 1), [&](QJsonObject &o) {
            QJsonArray launches = o.value(QStringLiteral("launches")).toArray();
            if (step >= 0 && step < launches.size()) {
                launches.removeAt(step);
            }
            o.insert(QStringLiteral("launches"), launches);
        }));
    });
    connect(this, &LaunchPanel::moveStepRequested, doc, [this, doc, refused](int from, int to) {
        m_step = to;
        refused(doc->edit(tr("Move launch step %1").arg(from + 1), [&](QJsonObject &o) {
            QJsonArray launches = o.value(QStringLiteral("launches")).toArray();
            if (from >= 0 && from < launches.size() && to >= 0 && to < launches.size()) {
                const QJsonValue moved = launches.takeAt(from);
                launches.insert(to, moved);
            }
            o.insert(QStringLiteral("launches"), launches);
        }));
    });
    connect(this, &LaunchPanel::createMissingRequested, doc, [this, doc, refused](int step, const QStringList &params) {
        const QList<LaunchStep> &launches = doc->project().launches;
        const KernelInfo *kernel = step < launches.size() ? findKernel(m_kernels, launches[step].kernel) : nullptr;
        if (!kernel) {
            return;
        }
        refused(doc->edit(params.size() == 1 ? tr("Create %1").arg(params.first()) : tr("Create missing arguments"),
                          [&](QJsonObject &o) { LaunchEdits::createMissing(o, step, *kernel, params); }));
    });
    connect(this, &LaunchPanel::streamChanged, doc, [doc, refused](int step, const QString &stream) {
        refused(doc->edit(tr("Set stream of step %1").arg(step + 1), [&](QJsonObject &o) {
            QJsonArray launches = o.value(QStringLiteral("launches")).toArray();
            if (step < 0 || step >= launches.size()) {
                return;
            }
            QJsonObject l = launches[step].toObject();
            if (stream.isEmpty()) {
                l.remove(QStringLiteral("stream"));
            } else {
                l.insert(QStringLiteral("stream"), stream);
            }
            launches[step] = l;
            o.insert(QStringLiteral("launches"), launches);
            // A name typed for the first time is a new stream: declared here, so the user need not.
            if (stream.isEmpty() || stream == QLatin1String("default") || stream == QLatin1String("legacy")) {
                return;
            }
            QJsonArray streams = o.value(QStringLiteral("streams")).toArray();
            for (const QJsonValue &s : streams) {
                if (s.toObject().value(QStringLiteral("name")).toString() == stream) {
                    return;
                }
            }
            streams.append(QJsonObject{{QStringLiteral("name"), stream}});
            o.insert(QStringLiteral("streams"), streams);
        }));
    });
    connect(this, &LaunchPanel::repeatEdited, doc, [doc, refused](const QJsonObject &repeat) {
        refused(doc->edit(tr("Set repeat"), [&](QJsonObject &o) { o.insert(QStringLiteral("repeat"), repeat); }));
    });
    setProject(doc->project());
    showValidation(); // made after the project was checked (after the window's first paint)
}

LaunchPanel::LaunchPanel(Workbench &wb, QWidget *parent)
    : LaunchPanel(parent)
{
    // The form's layout settles once with every field before the document
    // hides the rows a step's kind has no use for. Measured: with the
    // document set before the first layout, the panel's minimum width is
    // 490 px instead of 360, more than a 1280x800 window has room for.
    layout()->activate();
    // The arguments follow the signature: of a compile that may have landed
    // before the panel was made too, taken before the project and its checks.
    wb.compile().follow(this, [this](const CompileResult &r) { setKernels(r.kernels); });
    setDocument(&wb.document());
    RunController &runs = wb.runs();
    connect(this, &LaunchPanel::runRequested, &runs, &RunController::run);
    connect(this, &LaunchPanel::abortRequested, &runs, &RunController::abort);
    connect(this, &LaunchPanel::stepRequested, &runs, &RunController::step);
    connect(this, &LaunchPanel::playToggled, &runs, &RunController::setPlaying);
    connect(&runs, &RunController::playStopped, this, &LaunchPanel::stopPlaying);
    connect(this, &LaunchPanel::currentStepChanged, &wb.selection(), &Selection::setStep);
    wb.selection().setStep(currentStep());
    // Compile-only mode said where it matters: on the buttons that would run.
    const auto followDevices = [this, &wb] { setRunAvailable(wb.devices().canRun(), wb.devices().whyNoRun()); };
    connect(&wb.devices(), &Devices::changed, this, followDevices);
    if (wb.devices().known()) {
        followDevices(); // built after the GPUs were looked for (after the window's first paint)
    }
    const auto showOccupancy = [this, &runs] {
        const QString estimate = runs.occupancyEstimate(currentStep());
        if (!estimate.isEmpty()) {
            setOccupancy(estimate);
        }
    };
    connect(&wb.document(), &ProjectDocument::validationChanged, this, showOccupancy);
    showOccupancy();
    connect(&runs, &RunController::started, this, [this] { setRunning(true); });
    connect(&runs, &RunController::failed, this, [this] { setRunning(false); });
    connect(&wb, &Workbench::runFinished, this, [this](const RunResult &r) {
        setRunning(false);
        if (!r.steps.isEmpty()) {
            const StepResult &s = r.steps.first();
            setOccupancy(occupancyText(s.occupancy, s.limits.numRegs) +
                         tr(", %1 B static shared").arg(s.limits.staticSharedBytes));
        }
    });
}

} // namespace Kp

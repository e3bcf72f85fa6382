#include "panels/occupancy/occupancyview.h"

#include "workbench/devices.h"
#include "workbench/projectdocument.h"
#include "workbench/selection.h"
#include "workbench/workbench.h"

#include "plots/occupancychart.h"
#include "workbench/projectdocument.h"

#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QTabWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace Kp {

namespace {

const QString kDevice = QStringLiteral("device");

QString bytesText(qint64 bytes)
{
    return bytes >= 1024 && bytes % 1024 == 0 ? QStringLiteral("%1 KiB").arg(bytes / 1024)
                                              : QStringLiteral("%1 B").arg(bytes);
}

QString blocksText(int blocks)
{
    return blocks >= OccupancyResult::kNoLimit ? QStringLiteral("no limit") : QString::number(blocks);
}

} // namespace

OccupancyView::OccupancyView(QWidget *parent)
    : QWidget(parent)
{
    m_kernelChooser = new QComboBox;
    m_kernelChooser->setObjectName(QStringLiteral("occupancyKernel"));
    m_kernelChooser->setToolTip(tr("The kernel whose occupancy is shown (the current launch step's by default)"));
    // At least 4 characters wide whatever the kernels' names (it grows with the dock):
    // sized by its first contents, the dock's minimum width depended on
    // whether a project had compiled before the panel was built.
    m_kernelChooser->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_kernelChooser->setMinimumContentsLength(4);
    m_archChooser = new QComboBox;
    m_archChooser->setObjectName(QStringLiteral("occupancyArch"));
    m_archChooser->setToolTip(tr("Whose limits: the GPU's (after a run: the driver's attributes), or an "
                                 "architecture's recorded limits"));
    m_source = new QLabel(this);
    m_source->setObjectName(QStringLiteral("occupancySource"));
    m_source->setWordWrap(true);
    m_source->setTextInteractionFlags(Qt::TextSelectableByMouse);
    QFont small = m_source->font();
    if (small.pointSizeF() > 0) {
        small.setPointSizeF(small.pointSizeF() * 0.9);
    }
    m_source->setFont(small);

    m_blockSpin = new QSpinBox;
    m_blockSpin->setObjectName(QStringLiteral("occupancyBlock"));
    m_blockSpin->setRange(1, 1024);
    m_blockSpin->setSingleStep(32);
    m_blockSpin->setSuffix(tr(" threads"));
    m_blockSpin->setToolTip(tr("Threads per block (what if; the project is not changed)"));
    m_regSlider = new QSlider(Qt::Horizontal);
    m_regSlider->setObjectName(QStringLiteral("occupancyRegisters"));
    m_regSlider->setRange(1, 255);
    m_regSlider->setToolTip(tr("Registers per thread (what if); the kernel's own from ptxas -v"));
    m_regSpin = new QSpinBox;
    m_regSpin->setRange(1, 255);
    m_sharedSlider = new QSlider(Qt::Horizontal);
    m_sharedSlider->setObjectName(QStringLiteral("occupancyShared"));
    m_sharedSlider->setRange(0, 232448);
    m_sharedSlider->setSingleStep(128);
    m_sharedSlider->setPageStep(4096);
    m_sharedSlider->setToolTip(tr("Shared memory per block, static + dynamic (what if)"));
    m_sharedSpin = new QSpinBox;
    m_sharedSpin->setRange(0, 232448);
    m_sharedSpin->setSingleStep(128);
    m_sharedSpin->setSuffix(tr(" B"));
    m_reset = new QPushButton(tr("Reset"));
    m_reset->setObjectName(QStringLiteral("occupancyReset"));
    m_reset->setToolTip(tr("Back to the kernel's registers and shared memory and the launch's block size"));

    auto *regRow = new QHBoxLayout;
    regRow->addWidget(m_regSlider, 1);
    regRow->addWidget(m_regSpin);
    auto *sharedRow = new QHBoxLayout;
    sharedRow->addWidget(m_sharedSlider, 1);
    sharedRow->addWidget(m_sharedSpin);
    auto *blockRow = new QHBoxLayout;
    blockRow->addWidget(m_blockSpin, 1);
    blockRow->addWidget(m_reset);

    // Compact: in the right dock the charts need the height.
    auto *choices = new QHBoxLayout;
    choices->addWidget(m_kernelChooser, 1);
    choices->addWidget(new QLabel(tr("on")));
    choices->addWidget(m_archChooser, 1);
    auto *form = new QFormLayout;
    form->setContentsMargins(0, 0, 0, 0);
    form->setVerticalSpacing(2);
    form->addRow(tr("Kernel"), choices);
    form->addRow(tr("Block"), blockRow);
    form->addRow(tr("Registers"), regRow);
    form->addRow(tr("Shared"), sharedRow);
    // Where the limits come from is the chooser's tooltip and the first line of the limits' tooltip.
    m_source->hide();

    m_summary = new QLabel;
    m_summary->setObjectName(QStringLiteral("occupancySummary"));
    QFont bold = m_summary->font();
    bold.setBold(true);
    m_summary->setFont(bold);
    m_summary->setWordWrap(true);
    m_limiter = new QLabel;
    m_limiter->setObjectName(QStringLiteral("occupancyLimiter"));
    m_limiter->setWordWrap(true);
    m_limits = new QLabel(this);
    m_limits->hide();
    m_limits->setObjectName(QStringLiteral("occupancyLimits"));
    m_limits->setWordWrap(true);
    m_limits->setFont(small);
    m_driverLabel = new QLabel;
    m_driverLabel->setObjectName(QStringLiteral("occupancyDriver"));
    m_driverLabel->setWordWrap(true);
    m_driverLabel->setFont(small);

    // Each tab's chart is made when it is first drawn (chart()): a chart
    // costs milliseconds to build, and the window's start built three for a
    // dock behind another.
    m_tabs = new QTabWidget;
    m_tabs->setObjectName(QStringLiteral("occupancyTabs"));
    m_tabs->setDocumentMode(true);
    const QString titles[3] = {tr("Block size"), tr("Registers"), tr("Shared memory")};
    for (int i = 0; i < 3; ++i) {
        m_pages[size_t(i)] = new QWidget;
        auto *pageLayout = new QVBoxLayout(m_pages[size_t(i)]);
        pageLayout->setContentsMargins(0, 0, 0, 0);
        m_tabs->addTab(m_pages[size_t(i)], titles[i]);
    }

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->setSpacing(3);
    layout->addLayout(form);
    layout->addWidget(m_summary);
    layout->addWidget(m_limiter);
    layout->addWidget(m_driverLabel);
    layout->addWidget(m_tabs, 1);

    connect(m_kernelChooser, &QComboBox::activated, this,
            [this](int index) { chooseKernel(m_kernelChooser->itemText(index)); });
    connect(m_archChooser, &QComboBox::activated, this,
            [this](int index) { setArchitecture(m_archChooser->itemData(index).toString()); });
    connect(m_blockSpin, &QSpinBox::valueChanged, this, &OccupancyView::setBlockThreads);
    connect(m_regSlider, &QSlider::valueChanged, this, &OccupancyView::setRegisters);
    connect(m_regSpin, &QSpinBox::valueChanged, this, &OccupancyView::setRegisters);
    connect(m_sharedSlider, &QSlider::valueChanged, this, &OccupancyView::setSharedBytes);
    connect(m_sharedSpin, &QSpinBox::valueChanged, this, &OccupancyView::setSharedBytes);
    connect(m_reset, &QPushButton::clicked, this, &OccupancyView::resetToKernel);
    connect(m_tabs, &QTabWidget::currentChanged, this, [this] { drawVisibleCurves(); });

    m_sm = *recordedSmLimitsFor(9, 0);
    updateArchChoices();
    recompute();
}

OccupancyView::~OccupancyView() = default;

const KernelInfo *OccupancyView::kernelInfo(const QString &name) const
{
    for (const KernelInfo &k : m_compile.kernels) {
        if (k.name == name) {
            return &k;
        }
    }
    return nullptr;
}

void OccupancyView::setCompile(const CompileResult &result)
{
    const QString arch = architecture();
    // A compile that ran and failed has no kernels: the last good compile's
    // numbers stay, marked stale, rather than a default kernel's invented
    // ones (32 registers, 0 B, "100 %").
    m_stale = !result.ok && (result.errorCount() > 0 || !result.log.isEmpty());
    if (!m_stale || m_compile.kernels.isEmpty()) {
        m_compile = result;
    }
    QStringList names;
    for (const KernelInfo &k : result.kernels) {
        names << k.name;
    }
    m_kernelChooser->clear();
    m_kernelChooser->addItems(names);
    if (!names.contains(m_kernel)) {
        m_kernel = names.value(0);
    }
    m_kernelChooser->setCurrentText(m_kernel);
    // Without a GPU the compile's arch picks the table's row; a choice made by hand stays.
    if (!m_userArch && arch != kDevice && recordedSmLimitsFor(result.arch)) {
        applyArchitecture(recordedSmLimitsFor(result.arch)->arch());
    }
    resetToKernel();
}

void OccupancyView::setLaunch(const QString &kernel, int blockThreads, qint64 dynamicShared)
{
    m_launchThreads = std::max(1, blockThreads);
    m_launchDynamicShared = std::max<qint64>(0, dynamicShared);
    if (kernelInfo(kernel)) {
        m_kernel = kernel;
        m_kernelChooser->setCurrentText(kernel);
    }
    resetToKernel();
}

void OccupancyView::chooseKernel(const QString &name)
{
    m_kernel = name;
    resetToKernel();
}

void OccupancyView::setDevice(int ccMajor, int ccMinor)
{
    m_deviceMajor = ccMajor;
    m_deviceMinor = ccMinor;
    updateArchChoices();
    if (ccMajor > 0 && !m_userArch) {
        applyArchitecture(kDevice);
    }
}

void OccupancyView::setRun(const RunResult &result)
{
    if (result.steps.isEmpty()) {
        return;
    }
    const QList<DriverAnswer> before = m_driver;
    const std::optional<LaunchLimits> limitsBefore = m_deviceLimits;
    const QString deviceBefore = m_deviceName;
    m_deviceName = result.device;
    for (const StepResult &s : result.steps) {
        DriverAnswer a;
        a.kernel = s.kernel;
        a.blockThreads = int(s.block[0] * s.block[1] * s.block[2]);
        a.dynamicShared = s.sharedBytes;
        a.blocksPerSm = s.occupancy.blocksPerSm;
        a.limits = s.limits;
        m_deviceLimits = s.limits;
        // The newest answer for a kernel replaces older ones.
        m_driver.erase(std::remove_if(m_driver.begin(), m_driver.end(),
                                      [&a](const DriverAnswer &d) { return d.kernel == a.kernel; }),
                       m_driver.end());
        m_driver << a;
    }
    if (m_driver == before && m_deviceLimits == limitsBefore && m_deviceName == deviceBefore) {
        return; // the same answers (every frame of Play): nothing to draw again
    }
    updateArchChoices();
    if (!m_userArch || architecture() == kDevice) {
        applyArchitecture(kDevice);
    }
}

void OccupancyView::updateArchChoices()
{
    const QString current = architecture();
    m_archChooser->clear();
    if (m_deviceMajor > 0 || m_deviceLimits) {
        const QString name = m_deviceName.isEmpty() ? tr("the GPU") : m_deviceName;
        const QString cc =
            m_deviceMajor > 0 ? QStringLiteral(" (sm_%1%2)").arg(m_deviceMajor).arg(m_deviceMinor) : QString();
        m_archChooser->addItem(name + cc, kDevice);
    }
    for (const SmLimits &s : recordedSmLimits()) {
        m_archChooser->addItem(QStringLiteral("%1 (%2)").arg(s.arch(), s.examples), s.arch());
    }
    const int index = m_archChooser->findData(current);
    m_archChooser->setCurrentIndex(index >= 0 ? index : m_archChooser->count() - 1);
}

QString OccupancyView::architecture() const
{
    return m_archChooser ? m_archChooser->currentData().toString() : QString();
}

void OccupancyView::setArchitecture(const QString &arch)
{
    if (m_archChooser->findData(arch) >= 0) {
        m_userArch = true;
        applyArchitecture(arch);
    }
}

void OccupancyView::applyArchitecture(const QString &arch)
{
    const int index = m_archChooser->findData(arch);
    if (index < 0) {
        return;
    }
    m_archChooser->setCurrentIndex(index);
    updateLimits();
    recompute();
}

void OccupancyView::updateLimits()
{
    const QString arch = architecture();
    if (arch == kDevice) {
        const int major = m_deviceMajor > 0 ? m_deviceMajor : 9;
        const int minor = m_deviceMajor > 0 ? m_deviceMinor : 0;
        if (m_deviceLimits) {
            m_sm = smLimitsFromDevice(*m_deviceLimits, major, minor, m_deviceName);
        } else if (std::optional<SmLimits> recorded = recordedSmLimitsFor(major, minor)) {
            // The GPU is known but has not run yet: its architecture's recorded limits.
            m_sm = *recorded;
            m_sm.source = tr("%1; run once for the device's own attributes").arg(recorded->source);
        } else {
            // An architecture the table lacks: the nearest recorded one's numbers under its name.
            LaunchLimits unknown;
            unknown.maxThreadsPerBlock = unknown.maxThreadsPerSm = unknown.maxBlocksPerSm = unknown.regsPerSm = 0;
            unknown.sharedPerSm = unknown.sharedPerBlock = unknown.sharedPerBlockOptin = unknown.warpSize = 0;
            unknown.reservedSharedPerBlock = major >= 8 ? 1024 : 0;
            m_sm = smLimitsFromDevice(unknown, major, minor, QString());
        }
    } else if (std::optional<SmLimits> s = recordedSmLimitsFor(arch)) {
        m_sm = *s;
    }
    m_source->setText(m_sm.source);
    m_archChooser->setToolTip(tr("Whose limits: the GPU's (after a run: the driver's attributes), or an "
                                 "architecture's recorded limits.\nNow: %1")
                                  .arg(m_sm.source));
    m_sharedSlider->setMaximum(int(m_sm.sharedPerBlockOptin));
    m_sharedSpin->setMaximum(int(m_sm.sharedPerBlockOptin));
    m_blockSpin->setMaximum(m_sm.maxThreadsPerBlock);
    m_regSlider->setMaximum(m_sm.maxRegsPerThread);
    m_regSpin->setMaximum(m_sm.maxRegsPerThread);
}

void OccupancyView::resetToKernel()
{
    const KernelInfo *k = kernelInfo(m_kernel);
    m_use = KernelUse{};
    m_use.blockThreads = m_launchThreads;
    m_use.regsPerThread = k && k->resources.known ? std::max(1, k->resources.registers) : 32;
    m_use.staticShared = k && k->resources.known ? k->resources.sharedBytes : 0;
    m_use.dynamicShared = m_launchDynamicShared;
    updateLimits();
    recompute();
}

void OccupancyView::setBlockThreads(int threads)
{
    if (m_updating || threads == m_use.blockThreads) {
        return;
    }
    m_use.blockThreads = std::max(1, threads);
    recompute();
}

void OccupancyView::setRegisters(int regs)
{
    if (m_updating || regs == m_use.regsPerThread) {
        return;
    }
    m_use.regsPerThread = std::max(1, regs);
    recompute();
}

void OccupancyView::setSharedBytes(int bytes)
{
    if (m_updating || bytes == m_use.sharedPerBlock()) {
        return;
    }
    // The kernel's static arrays stay; what if changes the dynamic part (down to none).
    const qint64 total = std::max(0, bytes);
    m_use.staticShared = std::min(m_use.staticShared, total);
    m_use.dynamicShared = total - m_use.staticShared;
    recompute();
}

QString OccupancyView::summaryText() const
{
    const OccupancyResult &r = m_result;
    if (m_stale && m_compile.kernels.isEmpty()) {
        return tr("No kernel: the source does not compile (see Problems).");
    }
    const QString stale = m_stale ? tr("Stale, from the last compile that succeeded: ") : QString();
    if (r.blocksPerSm == 0) {
        return stale + tr("Cannot run: %1").arg(r.problem);
    }
    // The words of the Launch panel's Occupancy line (engine occupancyText), so one thing reads one way.
    return stale +
           tr("%1 % (%2 blocks/SM, %3 of %4 warps), limited by %5")
               .arg(QString::number(r.occupancy * 100, 'f', r.occupancy * 100 == std::floor(r.occupancy * 100) ? 0 : 1))
               .arg(r.blocksPerSm)
               .arg(r.activeWarps)
               .arg(r.maxWarps)
               .arg(occupancyLimitName(r.limiter));
}

QString OccupancyView::limiterText() const
{
    const OccupancyResult &r = m_result;
    QString why;
    switch (r.limiter) {
    case OccupancyLimit::Warps:
        why = r.activeWarps == r.maxWarps
                  ? tr("the SM's warps are all in use")
                  : tr("%1 warps per block do not divide the SM's %2 warps").arg(r.warpsPerBlock).arg(r.maxWarps);
        break;
    case OccupancyLimit::Blocks:
        why = tr("at most %1 blocks per SM; larger blocks would fill more warps").arg(m_sm.maxBlocksPerSm);
        break;
    case OccupancyLimit::Registers:
        why = tr("%1 registers per thread take %2 per warp of the SM's %3")
                  .arg(m_use.regsPerThread)
                  .arg(r.regsPerWarpAllocated)
                  .arg(m_sm.regsPerSm);
        break;
    case OccupancyLimit::SharedMemory:
        why = tr("%1 per block (with %2 reserved, rounded to %3 B) of the SM's %4")
                  .arg(bytesText(m_use.sharedPerBlock()), bytesText(m_sm.reservedSharedPerBlock))
                  .arg(m_sm.sharedAllocationUnit)
                  .arg(bytesText(m_sm.sharedPerSm));
        break;
    }
    return tr("Limited by %1: %2").arg(occupancyLimitName(r.limiter), why);
}

QString OccupancyView::driverText() const
{
    for (const DriverAnswer &d : m_driver) {
        if (d.kernel != m_kernel) {
            continue;
        }
        const KernelInfo *k = kernelInfo(m_kernel);
        const bool same = d.blockThreads == m_use.blockThreads && d.dynamicShared == m_use.dynamicShared &&
                          (!k || d.limits.numRegs == 0 || d.limits.numRegs == m_use.regsPerThread);
        if (!same) {
            return tr("The driver's answer for the last run (%1 threads, %2 registers, %3 dynamic): %4 blocks/SM")
                .arg(d.blockThreads)
                .arg(d.limits.numRegs)
                .arg(bytesText(d.dynamicShared))
                .arg(d.blocksPerSm);
        }
        return d.blocksPerSm == m_result.blocksPerSm
                   ? tr("The driver agrees: cuOccupancyMaxActiveBlocksPerMultiprocessor = %1").arg(d.blocksPerSm)
                   : tr("The driver says %1 blocks/SM (cuOccupancyMaxActiveBlocksPerMultiprocessor); this "
                        "calculator %2")
                         .arg(d.blocksPerSm)
                         .arg(m_result.blocksPerSm);
    }
    return {};
}

void OccupancyView::recompute()
{
    m_result = computeOccupancy(m_sm, m_use);
    m_updating = true;
    m_blockSpin->setValue(m_use.blockThreads);
    m_regSlider->setValue(m_use.regsPerThread);
    m_regSpin->setValue(m_use.regsPerThread);
    m_sharedSlider->setValue(int(m_use.sharedPerBlock()));
    m_sharedSpin->setValue(int(m_use.sharedPerBlock()));
    m_updating = false;

    m_summary->setText(summaryText());
    m_limiter->setText(m_result.blocksPerSm > 0 ? limiterText() : QString());
    QStringList parts;
    for (OccupancyLimit l :
         {OccupancyLimit::Warps, OccupancyLimit::Blocks, OccupancyLimit::Registers, OccupancyLimit::SharedMemory}) {
        QString part = QStringLiteral("%1: %2").arg(occupancyLimitName(l), blocksText(m_result.blocksBy(l)));
        if (m_result.blocksPerSm > 0 ? l == m_result.limiter : m_result.blocksBy(l) == 0) {
            part = QStringLiteral("<b>%1</b>").arg(part.toHtmlEscaped());
        } else {
            part = part.toHtmlEscaped();
        }
        parts << part;
    }
    m_limits->setText(tr("Blocks per SM by %1").arg(parts.join(QStringLiteral(", "))));
    // The numbers behind the sentence, where a pointer over it finds them.
    const QString details = QStringLiteral("<p>%1</p><p>%2</p><p>%3</p><p>%4</p>")
                                .arg(m_limits->text(),
                                     tr("Registers: %1 per warp allocated, %2 per block")
                                         .arg(m_result.regsPerWarpAllocated)
                                         .arg(m_result.regsPerBlockAllocated),
                                     tr("Shared memory: %1 per block allocated").arg(m_result.sharedPerBlockAllocated))
                                .arg(m_sm.source.toHtmlEscaped());
    m_summary->setToolTip(details);
    m_limiter->setToolTip(details);
    const QString driver = driverText();
    m_driverLabel->setText(driver);
    m_driverLabel->setVisible(!driver.isEmpty());

    m_curveStale = {true, true, true};
    drawVisibleCurves();
    Q_EMIT updated();
}

void OccupancyView::drawCurve(int which) const
{
    if (!m_curveStale[size_t(which)]) {
        return;
    }
    m_curveStale[size_t(which)] = false;
    const QString kernel = m_kernel.isEmpty() ? tr("no kernel") : m_kernel;
    switch (which) {
    case 0:
        chart(0)->showCurve(tr("%1 on %2, by block size").arg(kernel, m_sm.arch()), tr("threads per block"),
                            occupancyByBlockSize(m_sm, m_use), m_use.blockThreads, m_result);
        break;
    case 1:
        chart(1)->showCurve(tr("%1 on %2, by registers").arg(kernel, m_sm.arch()), tr("registers per thread"),
                            occupancyByRegisters(m_sm, m_use), m_use.regsPerThread, m_result);
        break;
    default:
        chart(2)->showCurve(tr("%1 on %2, by shared memory").arg(kernel, m_sm.arch()),
                            tr("shared memory per block (KiB)"), occupancyBySharedMemory(m_sm, m_use, 256),
                            int(m_use.sharedPerBlock()), m_result, true);
        break;
    }
}

void OccupancyView::drawVisibleCurves()
{
    if (isVisible()) {
        drawCurve(m_tabs->currentIndex());
    }
}

void OccupancyView::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    drawVisibleCurves();
}

OccupancyChart *OccupancyView::chart(int which) const
{
    OccupancyChart *&c = m_charts[size_t(which)];
    if (!c) {
        static const char *const names[3] = {"occupancyByBlock", "occupancyByRegisters", "occupancyByShared"};
        c = new OccupancyChart(m_pages[size_t(which)]);
        c->setObjectName(QLatin1String(names[which]));
        m_pages[size_t(which)]->layout()->addWidget(c);
    }
    return c;
}

OccupancyChart *OccupancyView::blockChart() const
{
    drawCurve(0);
    return chart(0);
}

OccupancyChart *OccupancyView::registerChart() const
{
    drawCurve(1);
    return chart(1);
}

OccupancyChart *OccupancyView::sharedChart() const
{
    drawCurve(2);
    return chart(2);
}

OccupancyView::OccupancyView(Workbench &wb, QWidget *parent)
    : OccupancyView(parent)
{
    ProjectDocument &doc = wb.document();
    Selection &selection = wb.selection();
    const auto fromDocument = [this, &doc, &selection] {
        setCompile(doc.compiled());
        const Validation &v = doc.validation();
        const int step = selection.step();
        if (step >= 0 && step < v.steps.size()) {
            setLaunch(v.steps[step].kernel, v.steps[step].threadsPerBlock, v.steps[step].sharedBytes);
        }
    };
    // Another project: the last good compile was another source's.
    connect(&doc, &ProjectDocument::loaded, this, [this] { m_compile = CompileResult{}; });
    connect(&doc, &ProjectDocument::validationChanged, this, fromDocument);
    connect(&selection, &Selection::stepChanged, this, fromDocument);
    connect(&wb, &Workbench::runFinished, this, [this](const RunResult &r) { setRun(r); });
    connect(&wb.devices(), &Devices::deviceFound, this, &OccupancyView::setDevice);
    if (const DeviceList &found = wb.devices().list(); !found.devices.isEmpty()) {
        setDevice(found.devices.first().ccMajor, found.devices.first().ccMinor); // as deviceFound() said
    }
    fromDocument();
}

} // namespace Kp

#pragma once

#include "compile/compiletypes.h"
#include "occupancy/occupancy.h"
#include "run/runtypes.h"

#include <QList>
#include <QString>
#include <QWidget>

#include <array>
#include <optional>

class QComboBox;
class QLabel;
class QPushButton;
class QSlider;
class QSpinBox;
class QTabWidget;

namespace Kp {

class Workbench;

class OccupancyChart;
class ProjectDocument;

/**
 * The Occupancy panel, after the CUDA Occupancy Calculator: resident blocks
 * per SM and occupancy of the selected kernel's launch, against block size,
 * registers per thread and shared memory per block, with the limiting
 * factor named and drawn and the current choice marked. Block size,
 * registers and shared memory can be changed here to ask "what if" (the
 * project is not edited). The SM's limits come from the device (a run's
 * driver attributes, and the driver's own cuOccupancyMaxActiveBlocksPerMultiprocessor
 * answer beside ours) or, without a GPU, from the recorded table of the
 * compile's architecture. GUI thread only.
 */
class OccupancyView : public QWidget
{
    Q_OBJECT
public:
    explicit OccupancyView(QWidget *parent = nullptr);
    /** The dock's view: wb's compile, the selected launch step, the runs and the GPU. */
    OccupancyView(Workbench &wb, QWidget *parent = nullptr);
    ~OccupancyView() override;

    /** The kernels and their resources (registers, static shared memory) and the arch they were compiled for. */
    void setCompile(const CompileResult &result);
    /** The launch to show: kernel, threads per block and dynamic shared bytes (from the project). */
    void setLaunch(const QString &kernel, int blockThreads, qint64 dynamicShared);
    /** The GPU's compute capability (0.0: none), as the status bar found it. */
    void setDevice(int ccMajor, int ccMinor);
    /** A finished run: the device's limits and the driver's answers for its steps. */
    void setRun(const RunResult &result);

    /** What if: another block size, registers per thread or shared memory per block (static + dynamic). */
    void setBlockThreads(int threads);
    void setRegisters(int regs);
    void setSharedBytes(int bytes);
    /** Back to the kernel's and the launch's own values. */
    void resetToKernel();

    /** Chooses the SM limits: "device" (when a run or GPU gave them) or an arch of the table ("sm_86"). */
    void setArchitecture(const QString &arch);
    QString architecture() const;

    const SmLimits &smLimits() const { return m_sm; }
    KernelUse currentUse() const { return m_use; }
    OccupancyResult currentResult() const { return m_result; }
    /** The sentence under the numbers: "100 % (8 blocks/SM, 64 of 64 warps), limited by warps", as the Launch panel
     * words it. */
    QString summaryText() const;
    /** "Limited by registers: ..." */
    QString limiterText() const;
    /** The driver's answer for this kernel and launch, with how it compares; empty when there is none. */
    QString driverText() const;
    QSlider *registerSlider() const { return m_regSlider; }
    QSlider *sharedSlider() const { return m_sharedSlider; }
    QSpinBox *blockSpin() const { return m_blockSpin; }
    /** The charts, each brought up to date when asked for (a hidden one is drawn only when shown). */
    OccupancyChart *blockChart() const;
    OccupancyChart *registerChart() const;
    OccupancyChart *sharedChart() const;
    QTabWidget *chartTabs() const { return m_tabs; }

Q_SIGNALS:
    /** The numbers changed (a slider, another kernel, a run). */
    void updated();

protected:
    void showEvent(QShowEvent *event) override;

private:
    struct DriverAnswer
    {
        QString kernel;
        int blockThreads = 0;
        qint64 dynamicShared = 0;
        int blocksPerSm = 0;
        LaunchLimits limits;
        bool operator==(const DriverAnswer &) const = default;
    };
    const KernelInfo *kernelInfo(const QString &name) const;
    void chooseKernel(const QString &name);
    void updateLimits();
    void recompute();
    /** Draws chart `which` (0 block size, 1 registers, 2 shared memory) when its curve is out of date. */
    void drawCurve(int which) const;
    /** The chart of tab which (0 block size, 1 registers, 2 shared memory), made on first use. */
    OccupancyChart *chart(int which) const;
    /** Draws the out-of-date curves that are on screen; the others wait until shown (they cost most of a start). */
    void drawVisibleCurves();
    void updateArchChoices();
    /** Shows the limits of arch ("device" or a table row) without taking it as the user's choice. */
    void applyArchitecture(const QString &arch);

    CompileResult m_compile;
    QString m_kernel;
    int m_launchThreads = 256;
    qint64 m_launchDynamicShared = 0;
    int m_deviceMajor = 0;
    int m_deviceMinor = 0;
    QString m_deviceName;
    std::optional<LaunchLimits> m_deviceLimits;
    QList<DriverAnswer> m_driver;
    SmLimits m_sm;
    KernelUse m_use;
    OccupancyResult m_result;
    bool m_updating = false;
    bool m_userArch = false; ///< the limits were chosen by hand: compiles and runs do not change them
    /** The source does not compile now: the numbers are the last good compile's (or none). */
    bool m_stale = false;
    /** Which charts' curves are older than the numbers: block size, registers, shared memory. */
    mutable std::array<bool, 3> m_curveStale{true, true, true};

    QComboBox *m_kernelChooser = nullptr;
    QComboBox *m_archChooser = nullptr;
    QLabel *m_source = nullptr;
    QSpinBox *m_blockSpin = nullptr;
    QSlider *m_regSlider = nullptr;
    QSpinBox *m_regSpin = nullptr;
    QSlider *m_sharedSlider = nullptr;
    QSpinBox *m_sharedSpin = nullptr;
    QPushButton *m_reset = nullptr;
    QLabel *m_summary = nullptr;
    QLabel *m_limiter = nullptr;
    QLabel *m_limits = nullptr;
    QLabel *m_driverLabel = nullptr;
    QTabWidget *m_tabs = nullptr;
    std::array<QWidget *, 3> m_pages{};                 // the tabs' pages: block size, registers, shared memory
    mutable std::array<OccupancyChart *, 3> m_charts{}; // made on first draw (chart()), in a drawing const method
};

} // namespace Kp

#pragma once

#include "core/result.h"

#include <QObject>

class QComboBox;
class QLabel;
class QStatusBar;

namespace Kp {

class EngineClient;

/**
 * The GPU part of the status bar: what the worker found (or why it found
 * nothing: compile-only mode), and, with more than one GPU, a chooser of the
 * GPU runs go to. GUI thread only.
 */
class DeviceStatus : public QObject
{
    Q_OBJECT
public:
    /** Adds its widgets to bar. engine is not owned and must outlive this object. */
    DeviceStatus(EngineClient *engine, QStatusBar *bar, QObject *parent = nullptr);

    /** Asks the worker for the GPUs; changed() tells when the answer is in. */
    void refresh();
    /** True once the status is known (found, or why not). */
    bool known() const { return m_known; }
    QString text() const;
    /** True once a GPU was found: runs can happen. False before the answer and in compile-only mode. */
    bool canRun() const { return m_canRun; }
    /** Why runs cannot happen, in words for a tooltip; empty when they can. */
    QString whyNoRun() const { return m_whyNoRun; }
    /** The CUDA driver's version ("12.4"), or why there is none. */
    QString driverVersion() const { return m_driverVersion; }
    /** Shows ordinal as chosen (no signal). */
    void setOrdinal(int ordinal);

Q_SIGNALS:
    /** The first GPU's compute capability (0.0 when there is none). */
    void deviceFound(int ccMajor, int ccMinor);
    /** The user chose the GPU with this ordinal. */
    void ordinalChosen(int ordinal);
    void changed();

private:
    EngineClient *m_engine;
    QLabel *m_label = nullptr;
    QComboBox *m_chooser = nullptr;
    int m_ordinal = 0;
    bool m_known = false;
    bool m_canRun = false;
    QString m_whyNoRun;
    QString m_driverVersion;
};

} // namespace Kp

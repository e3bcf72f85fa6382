#pragma once

// A panel under test gets what the window gives it, and nothing more: a
// Workbench (its document, controllers, devices and history) over a real
// worker. No MainWindow is built.

#include "client/engineclient.h"
#include "workbench/compilecontroller.h"
#include "workbench/projectdocument.h"
#include "workbench/workbench.h"

#include <QSignalSpy>
#include <QtTest>

#include <memory>

namespace KpTest {

struct PanelFixture
{
    Kp::EngineClient engine;
    Kp::Workbench wb{&engine};

    /** Opens project path and waits for its first compile to land (false on a time-out or a refusal). */
    bool open(const QString &path, int timeoutMs = 60000)
    {
        QSignalSpy settled(&wb.compile(), &Kp::CompileController::settled);
        if (!wb.document().openProject(path)) {
            return false;
        }
        wb.compile().compileNow();
        return settled.wait(timeoutMs);
    }
};

} // namespace KpTest

#pragma once

// Screenshots for looking at, not for asserting: with KPG_TEST_SCREENSHOTS=DIR
// a test saves the widgets a person should see as DIR/NAME.png (the GPU
// machine's runs bring them back).

#include <QDir>
#include <QString>
#include <QTest>
#include <QWidget>

namespace KpTest {

/** With KPG_TEST_SCREENSHOTS=DIR, saves w as DIR/name.png, after settleMs of events (layout, painting). */
inline void screenshot(QWidget *w, const QString &name, int settleMs = 0)
{
    const QString dir = qEnvironmentVariable("KPG_TEST_SCREENSHOTS");
    if (dir.isEmpty()) {
        return;
    }
    if (settleMs > 0) {
        QTest::qWait(settleMs);
    }
    QDir().mkpath(dir);
    w->grab().save(dir + QLatin1Char('/') + name + QStringLiteral(".png"));
}

} // namespace KpTest

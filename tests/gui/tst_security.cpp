// The GUI's side of docs/security.md: Settings > Confine Projects to Their
// Folder holds opened projects to their folder (the program's presets stay
// open), and the status bar says whether the compiler is sandboxed.

#include "client/engineclient.h"
#include "compile/sandbox.h"
#include "shell/mainwindow.h"
#include "testutil.h"
#include "workbench/projectdocument.h"

#include <QAction>
#include <QFile>
#include <QLabel>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

using namespace Kp;

class TestSecurity : public QObject
{
    Q_OBJECT

    QTemporaryDir m_tmp;
    QString m_project; // a project whose source is reached through a link to a folder beside it

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_tmp.isValid());
        QVERIFY(QDir().mkpath(m_tmp.filePath("lab")));
        QVERIFY(QDir().mkpath(m_tmp.filePath("elsewhere")));
        QFile cu(m_tmp.filePath("elsewhere/k.cu"));
        QVERIFY(cu.open(QIODevice::WriteOnly));
        cu.write("extern \"C\" __global__ void k(int n) {}\n");
        cu.close();
        QVERIFY(QFile::link(m_tmp.filePath("elsewhere"), m_tmp.filePath("lab/shared")));
        m_project = m_tmp.filePath("lab/p.kpg");
        QFile kpg(m_project);
        QVERIFY(kpg.open(QIODevice::WriteOnly));
        kpg.write(R"({"format": "kernel-playground-project", "version": 1, "source": "shared/k.cu",
 "scalars": [{"name": "n", "type": "int32", "value": 4}],
 "launches": [{"kernel": "k", "grid": [1], "block": [4], "args": ["n"]}]})");
    }

    void confinedOpenRefusesAndKeepsTheDocument()
    {
        ProjectDocument::setConfinePaths(false);
        ProjectDocument doc;
        QVERIFY(doc.open(QStringLiteral(":/presets/vector_add/vector_add.kpg")).ok());
        const QString before = doc.project().title;

        // Off (the default): the project's own choice of files stands.
        ProjectDocument open;
        const Status loose = open.open(m_project);
        QVERIFY2(loose.ok(), loose.ok() ? "" : qPrintable(loose.error().message));

        ProjectDocument::setConfinePaths(true);
        const Status refused = doc.open(m_project);
        QVERIFY(!refused.ok());
        QCOMPARE(refused.error().path, QString("source"));
        QVERIFY2(refused.error().message.contains("'shared/k.cu' (it leads to"), qPrintable(refused.error().message));
        QVERIFY2(refused.error().message.contains("outside the project's folder"), qPrintable(refused.error().message));
        QCOMPARE(doc.project().title, before); // nothing of the open document was lost

        // The program's presets are not the user's files: they still open.
        QVERIFY(doc.open(QStringLiteral(":/presets/heat/heat.kpg")).ok());
        ProjectDocument::setConfinePaths(false);
    }

    void windowSaysSandboxAndOffersTheSetting()
    {
        ProjectDocument::setConfinePaths(false);
        EngineClient engine;
        MainWindow w(&engine);
        const QLabel *label = w.findChild<QLabel *>("sandboxStatus");
        QVERIFY(label);
        const Sandbox::Availability sandbox = Sandbox::availability();
        QCOMPARE(label->text(), sandbox.sandboxed ? QString("Sandboxed") : QString("Not sandboxed"));
        QVERIFY(label->toolTip().contains(sandbox.text));

        QAction *confine = w.findChild<QAction *>("confineAction");
        QVERIFY(confine && confine->isCheckable() && !confine->isChecked());
        confine->trigger();
        QVERIFY(ProjectDocument::confinePaths());
        confine->trigger();
        QVERIFY(!ProjectDocument::confinePaths());
    }
};

QTEST_MAIN(TestSecurity)
#include "tst_security.moc"

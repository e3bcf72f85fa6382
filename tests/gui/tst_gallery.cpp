// The presets gallery and the Description dock offscreen: the gallery lists
// every preset folder of presets/ (embedded in the program's resources),
// the start page stands in while nothing is open, a card opens with Enter
// (after arrow keys) or a double-click and loads that project, whose
// Markdown description the Description dock shows; thumbnails are drawn
// without a GPU and rendered from an image buffer when there is one.

#include "client/engineclient.h"
#include "editor/codeeditor.h"
#include "panels/description/descriptionview.h"
#include "panels/start/presetgallery.h"
#include "project/projectio.h"
#include "run/runner.h"
#include "shell/mainwindow.h"
#include "testutil.h"
#include "workbench/compilecontroller.h"

#include <QDir>
#include <QLineEdit>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QStackedWidget>
#include <QTreeWidget>
#include <QtTest>

using namespace Kp;

namespace {

/** The preset folders in the source tree: NAME/NAME.kpg. */
QStringList presetFolders()
{
    QStringList names;
    const QDir dir(QStringLiteral(KPG_SOURCE_DIR "/presets"));
    for (const QString &n : dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
        if (QFileInfo::exists(dir.filePath(n + "/" + n + ".kpg"))) {
            names << n;
        }
    }
    return names;
}

} // namespace

class TestGallery : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        qputenv("KPG_CUDA_DRIVER", "/nonexistent/libcuda.so.1");
    }

    void listsEveryPresetFolder()
    {
        const QStringList folders = presetFolders();
        QVERIFY(folders.size() >= 3);
        const QList<PresetInfo> presets = listPresets();
        QStringList names;
        for (const PresetInfo &p : presets) {
            names << p.name;
            QVERIFY2(p.error.isEmpty(), qPrintable(p.name + ": " + p.error));
            const Result<Project> project =
                loadProject(QStringLiteral(KPG_SOURCE_DIR "/presets/%1/%1.kpg").arg(p.name));
            KP_VERIFY_RESULT(project);
            QCOMPARE(p.title, project->title.isEmpty() ? p.name : project->title);
            QCOMPARE(p.description, project->description);
            QVERIFY2(!p.summary.isEmpty(), qPrintable(p.name));
            QVERIFY(!p.summary.startsWith('#'));
        }
        // Every folder, listed by title as the cards read (the folder order put Game of Life first).
        QStringList sortedNames = names;
        sortedNames.sort();
        QStringList sortedFolders = folders;
        sortedFolders.sort();
        QCOMPARE(sortedNames, sortedFolders);
        for (int i = 1; i < presets.size(); ++i) {
            QVERIFY2(QString::compare(presets[i - 1].title, presets[i].title, Qt::CaseInsensitive) <= 0,
                     qPrintable(presets[i - 1].title + " before " + presets[i].title));
        }

        PresetGallery gallery;
        QCOMPARE(gallery.count(), folders.size());
        for (int i = 0; i < gallery.count(); ++i) {
            QCOMPARE(gallery.item(i)->text(), presets[i].title);
            const QImage thumb = gallery.item(i)->data(Qt::DecorationRole).value<QImage>();
            QCOMPARE(thumb.size(), QSize(PresetGallery::kThumbWidth, PresetGallery::kThumbHeight));
        }
    }

    // Issue 29: the gallery had no search. Typing narrows the cards to
    // every word's matches (in the titles, else the descriptions); Enter
    // opens the first shown.
    void searchNarrowsTheCards()
    {
        StartPage page;
        page.resize(1000, 700);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        PresetGallery *gallery = page.gallery();
        const int all = gallery->count();
        const auto shownTitles = [gallery] {
            QStringList t;
            for (int row = 0; row < gallery->count(); ++row) {
                if (!gallery->item(row)->isHidden()) {
                    t << gallery->item(row)->text();
                }
            }
            return t;
        };
        page.searchField()->setFocus();
        QTest::keyClicks(page.searchField(), "transpose");
        QCOMPARE(shownTitles(), (QStringList{"Matrix transpose through a padded tile",
                                             "Matrix transpose through shared memory", "Matrix transpose, naive"}));
        QVERIFY(!gallery->currentItem()->isHidden());
        QTest::keyClicks(page.searchField(), " padded");
        QCOMPARE(shownTitles(), QStringList{"Matrix transpose through a padded tile"});
        QSignalSpy opened(&page, &StartPage::presetActivated);
        QTest::keyClick(page.searchField(), Qt::Key_Return);
        QCOMPARE(opened.count(), 1);
        QVERIFY2(opened[0][0].toString().contains("transpose"), qPrintable(opened[0][0].toString()));
        // Words of no title search the descriptions.
        page.searchField()->clear();
        QTest::keyClicks(page.searchField(), "bank conflicts");
        QVERIFY2(shownTitles().contains("Matrix transpose through a padded tile"), qPrintable(shownTitles().join('|')));
        page.searchField()->clear();
        QTest::keyClicks(page.searchField(), "no such preset");
        QVERIFY(shownTitles().isEmpty());
        page.searchField()->clear();
        QCOMPARE(shownTitles().size(), all);
    }

    void startPageAndKeyboard()
    {
        const QStringList folders = presetFolders();
        for (int k = 0; k < folders.size(); ++k) {
            EngineClient engine;
            MainWindow w(&engine);
            w.resize(1400, 900);
            w.show();
            QVERIFY(QTest::qWaitForWindowExposed(&w));
            auto *central = qobject_cast<QStackedWidget *>(w.centralWidget());
            QVERIFY(central);
            QCOMPARE(central->currentWidget(), static_cast<QWidget *>(w.startPage()));
            if (k == 0) {
                // Nothing is compiled behind the start page: the empty untitled
                // document used to put "kernel.cu is empty" into Problems.
                // A GPU's arrival recompiles (setDevice); compileNow stands in
                // for it here. An empty source is refused before NVRTC, well
                // within this wait.
                QSignalSpy started(w.compileController(), &CompileController::statusChanged);
                w.compileNow();
                // Behind the start page compileNow() starts nothing: no compile
                // is in flight that could still land in Problems.
                QCOMPARE(started.count(), 0);
                QVERIFY(!w.compileController()->isPending());
                QCOMPARE(w.problems()->topLevelItemCount(), 0);
            }
            PresetGallery *gallery = w.startPage()->gallery();
            QCOMPARE(gallery->count(), folders.size());
            gallery->setFocus();
            QCOMPARE(gallery->currentRow(), 0);
            // Move to card k with the arrow keys as a user would (Right, wrapping rows), then Enter.
            for (int step = 0; step < k && gallery->currentRow() != k; ++step) {
                QTest::keyClick(gallery, Qt::Key_Right);
            }
            if (gallery->currentRow() != k) {
                gallery->setCurrentRow(k); // a layout with one card per row moves with Down
            }
            QCOMPARE(gallery->currentRow(), k);
            QTest::keyClick(gallery, Qt::Key_Return);
            const QString expected = listPresets().value(k).path; // card k, in title order
            QCOMPARE(w.project().path, expected);
            QVERIFY(central->currentWidget() != static_cast<QWidget *>(w.startPage()));
            QVERIFY(w.editor()->isVisible());
            QVERIFY(!w.startPage()->isVisible());
            // The Description dock shows this project's Markdown, rendered.
            const Result<Project> p = loadProject(expected);
            KP_VERIFY_RESULT(p);
            const QString shown = w.descriptionView()->toPlainText();
            QVERIFY2(!shown.isEmpty(), qPrintable(folders[k]));
            QVERIFY2(shown.contains(p->title), qPrintable(shown));
            QVERIFY2(!shown.contains("# "), qPrintable(shown)); // headings rendered, not shown as text
            QCOMPARE(w.descriptionView()->toMarkdown().isEmpty(), false);
        }
    }

    void doubleClickOpens()
    {
        EngineClient engine;
        MainWindow w(&engine);
        w.resize(1400, 900);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        PresetGallery *gallery = w.startPage()->gallery();
        const int last = gallery->count() - 1;
        gallery->scrollToItem(gallery->item(last));
        const QRect r = gallery->visualItemRect(gallery->item(last));
        // As a mouse sends it: a press and release, then the double-click on the same card.
        QTest::mouseClick(gallery->viewport(), Qt::LeftButton, {}, r.center());
        QCOMPARE(w.project().path, QString()); // one click only chooses
        QTest::mouseDClick(gallery->viewport(), Qt::LeftButton, {}, r.center());
        QCOMPARE(w.project().path, gallery->presets()[last].path);
    }

    void descriptionOfAnyProject()
    {
        QTemporaryDir dir;
        QFile cu(dir.filePath("k.cu"));
        QVERIFY(cu.open(QIODevice::WriteOnly));
        cu.write("extern \"C\" __global__ void k(float *x) {}\n");
        cu.close();
        QFile kpg(dir.filePath("k.kpg"));
        QVERIFY(kpg.open(QIODevice::WriteOnly));
        kpg.write("{\"format\": \"kernel-playground-project\", \"version\": 1, \"title\": \"Mine\",\n"
                  " \"description\": [\"Some **bold** words and a [link](https://example.org).\", \"\",\n"
                  "                   \"![x](/etc/passwd)\"],\n"
                  " \"source\": \"k.cu\", \"buffers\": [], \"launches\": []}");
        kpg.close();
        EngineClient engine;
        MainWindow w(&engine);
        KP_VERIFY_RESULT(w.openProject(dir.filePath("k.kpg")));
        const QString text = w.descriptionView()->toPlainText();
        QVERIFY2(text.startsWith("Mine"), qPrintable(text)); // the title as a heading
        QVERIFY2(text.contains("Some bold words and a link."), qPrintable(text));
        // Nothing of an untrusted description is loaded from disk.
        QVERIFY(!w.descriptionView()->loadResource(QTextDocument::ImageResource, QUrl("file:///etc/passwd")).isValid());

        // A project without a description says how to add one.
        KP_VERIFY_RESULT(w.openSource(dir.filePath("k.cu")));
        QVERIFY2(w.descriptionView()->toPlainText().contains("no description"),
                 qPrintable(w.descriptionView()->toPlainText()));
    }

    void thumbnails()
    {
        const QList<PresetInfo> presets = listPresets();
        QVERIFY(presets.size() >= 2);
        const QImage g0 = genericThumbnail(presets[0], {200, 120});
        const QImage g1 = genericThumbnail(presets[1], {200, 120});
        QCOMPARE(g0.size(), QSize(200, 120));
        QVERIFY(g0 != g1);

        // An image buffer of random values renders to a thumbnail with as many shades.
        Project p;
        BufferSpec b;
        b.name = "img";
        b.dtype = DType::Float32;
        b.shape = {60, 100};
        b.init.kind = BufferInit::Kind::Random;
        b.init.min = 0;
        b.init.max = 1;
        b.init.seed = 42;
        p.buffers << b;
        HostBuffers buffers;
        KP_VERIFY_RESULT(buffers.materialize(p));
        QCOMPARE(thumbnailBufferOf(p), QString()); // random inputs are not an output
        const QImage t = renderBufferThumbnail(*buffers.find("img"), {200, 120});
        QCOMPARE(t.size(), QSize(200, 120));
        QSet<QRgb> colours;
        for (int y = 0; y < t.height(); y += 7) {
            for (int x = 0; x < t.width(); x += 7) {
                colours.insert(t.pixel(x, y));
            }
        }
        QVERIFY2(colours.size() > 50, qPrintable(QString::number(colours.size())));
        // Stored, it becomes that preset's card.
        QVERIFY(storeThumbnail(presets[0].name, t));
        QCOMPARE(presetThumbnail(presets[0], {200, 120}).pixel(50, 50), t.pixel(50, 50));
        QVERIFY(!storeThumbnail("../evil", t));
        QFile::remove(thumbnailCachePath(presets[0].name));

        // A 1-D buffer is not an image.
        BufferSpec v = b;
        v.name = "v";
        v.shape = {1000};
        Project q;
        q.buffers << v;
        HostBuffers vb;
        KP_VERIFY_RESULT(vb.materialize(q));
        QVERIFY(renderBufferThumbnail(*vb.find("v"), {200, 120}).isNull());
    }

    void newFromPresetDialog()
    {
        PresetDialog dialog;
        dialog.show();
        PresetGallery *gallery = dialog.gallery();
        gallery->setFocus();
        gallery->setCurrentRow(gallery->count() - 1);
        QTest::keyClick(gallery, Qt::Key_Return);
        QCOMPARE(dialog.result(), int(QDialog::Accepted));
        QCOMPARE(dialog.chosenPath(), gallery->presets().last().path);
    }
};

QTEST_MAIN(TestGallery)
#include "tst_gallery.moc"

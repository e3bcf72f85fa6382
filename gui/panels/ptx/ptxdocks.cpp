#include "ptxdocks.h"

#include "editor/disassembler.h"
#include "editor/ptxview.h"
#include "workbench/compilecontroller.h"
#include "workbench/projectdocument.h"
#include "workbench/selection.h"
#include "workbench/workbench.h"

#include <QTimer>

namespace Kp {

namespace {

/** Both views: their lines for the editor's selection marked; a click marks the source line. */
void followSelection(PtxView *view, Workbench &wb)
{
    Selection &selection = wb.selection();
    QObject::connect(&selection, &Selection::sourceLinesChanged, view, &PtxView::highlightSourceLines);
    QObject::connect(view, &PtxView::sourceLineSelected, &wb,
                     [&wb](int line) { wb.requestSourceLine(0, 0, line, line); });
}

} // namespace

PtxView *makePtxPanel(Workbench &wb, QWidget *parent)
{
    auto *view = new PtxView(parent);
    view->setObjectName(QStringLiteral("ptx"));
    followSelection(view, wb);
    wb.compile().follow(view, [view, &wb](const CompileResult &r) {
        if (!r.ptx.isEmpty()) {
            view->setPtx(r.ptx, wb.document().sourceFileName());
            view->highlightSourceLines(wb.selection().firstSourceLine(), wb.selection().lastSourceLine());
        } else if (view->text().isEmpty() || view->lineMap().isEmpty()) {
            view->setPtx(QByteArrayLiteral("// No PTX: the source does not compile yet (see Problems).\n"), {});
        }
    });
    return view;
}

PtxView *makeSassPanel(Workbench &wb, QWidget *parent)
{
    auto *view = new PtxView(parent);
    view->setObjectName(QStringLiteral("sass"));
    followSelection(view, wb);
    auto *disassembler = new Disassembler(view);
    disassembler->setObjectName(QStringLiteral("disassembler"));
    const auto disassemble = [disassembler, &wb](const CompileResult &r) {
        if (!r.ptx.isEmpty()) {
            disassembler->disassemble(r, wb.document().sourceFileName());
        }
    };
    QObject::connect(&wb.compile(), &CompileController::compiled, disassembler, disassemble);
    QObject::connect(disassembler, &Disassembler::finished, view,
                     [view, &wb](const QByteArray &text, const PtxLineMap &map) {
                         view->setAssembly(text, map);
                         view->highlightSourceLines(wb.selection().firstSourceLine(), wb.selection().lastSourceLine());
                     });
    if (wb.compile().hasAnswer()) {
        // Built after the compile landed (shell/docks.h): in the next turn,
        // when whoever made the panel listens to finished() too.
        QTimer::singleShot(0, disassembler, [disassemble, &wb] { disassemble(wb.compile().last()); });
    }
    return view;
}

} // namespace Kp

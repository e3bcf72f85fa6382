#pragma once

class QWidget;

namespace Kp {

class PtxView;
class Workbench;

/**
 * The PTX dock: the last compile's PTX, its lines for the editor's selected
 * source lines marked; a click on a line marks its source line.
 */
PtxView *makePtxPanel(Workbench &wb, QWidget *parent);

/**
 * The SASS dock: the last compile's cubin disassembled (nvdisasm, off the GUI
 * thread), marked and clicked as the PTX dock is. sassFinished() of the
 * returned view's Disassembler child tells when it is filled.
 */
PtxView *makeSassPanel(Workbench &wb, QWidget *parent);

} // namespace Kp

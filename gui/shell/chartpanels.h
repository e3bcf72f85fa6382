#pragma once

#include "workbench/workbench.h"

class QWidget;

namespace Kp {

/**
 * The panels drawn with Qt Charts (Results, Compare, Occupancy) live in a
 * module of their own, kpg_charts.so (chartmodule.cpp), which the window loads
 * when the first of them is built, after its first paint: Qt Charts and the
 * OpenGL libraries it needs stay out of the program's start
 * (docs/ARCHITECTURE.md, "Start, measured"). A program that links the
 * panels itself (the tests, bench_gui) uses its own copy.
 *
 * The module is looked for at ../lib/kernel-playground/kpg_charts.so from
 * the program's folder (the build tree, the .deb and the bundle lay it out
 * so), or at KPG_CHARTS_MODULE. When it cannot be loaded, each of those
 * docks says so, with the loader's reason, and the rest of the window works.
 */
/** A new chart panel on wb, or a label with the reason the module could not be loaded. GUI thread only. */
QWidget *makeChartPanel(PanelId id, Workbench &wb, QWidget *parent);

} // namespace Kp

#!/usr/bin/env python3
"""The include order of docs/ARCHITECTURE.md, checked on every #include.

A folder is a library (or a layer of one): it may include only itself and
the folders declared below it. A panel (gui/panels/<name>/) includes no
other panel. engine/ never includes Qt Widgets, QtCharts or the GUI. Prints
each offending line as FILE:LINE: why, and exits 1 when there is any.

usage: includes.py [ROOT]   (the repository root; default: two folders up)
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..'))

# Bottom to top: a folder may include the folders listed before it.
GUI_ORDER = ['workbench', 'editor', 'plots', 'panels', 'shell']

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
QT_WIDGETS = re.compile(r'^(QtWidgets/|QtCharts/|Qsci/|Q(Widget|MainWindow|Dialog|Label|PushButton|ToolButton|'
                        r'LineEdit|ComboBox|SpinBox|TableView|TableWidget|TreeWidget|TreeView|DockWidget|'
                        r'Application|MessageBox|FileDialog|Menu|MenuBar|Action|StatusBar|ScrollArea|Splitter|'
                        r'TabWidget|VBoxLayout|HBoxLayout|FormLayout|GridLayout|Chart\w*|Painter\w*Widget)$)')


def sources(top):
    for base, dirs, files in os.walk(os.path.join(ROOT, top)):
        dirs[:] = sorted(d for d in dirs if not d.startswith('.'))
        for f in sorted(files):
            if f.endswith(('.cpp', '.h')):
                yield os.path.join(base, f)


def resolve(includer, name):
    """The repository path an #include "name" reaches, as the build's include paths find it."""
    here = os.path.dirname(includer)
    for base in (here, os.path.join(ROOT, 'gui'), os.path.join(ROOT, 'engine'), os.path.join(ROOT, 'cli')):
        path = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(path):
            return os.path.relpath(path, ROOT)
    return None


def gui_layer(rel):
    parts = rel.split('/')
    if parts[0] != 'gui' or len(parts) < 3:
        return None, None
    layer = parts[1]
    panel = parts[2] if layer == 'panels' and len(parts) > 3 else None
    return layer, panel


def check(path, problems):
    rel = os.path.relpath(path, ROOT)
    text = open(path, encoding='utf-8', errors='replace').read()
    for m in INCLUDE.finditer(text):
        line = text.count('\n', 0, m.start()) + 1
        kind, name = m.group(1), m.group(2)
        where = f'{rel}:{line}'
        if rel.startswith('engine/'):
            if kind == '<' and QT_WIDGETS.match(name):
                problems.append(f'{where}: engine/ includes <{name}> (Qt Widgets, Charts or QScintilla)')
            if kind == '"':
                target = resolve(path, name)
                if target and not target.startswith('engine/'):
                    problems.append(f'{where}: engine/ includes {target}, outside the engine')
            continue
        if not rel.startswith('gui/') or kind != '"':
            continue
        target = resolve(path, name)
        if target is None or target.startswith('engine/'):
            continue
        if not target.startswith('gui/'):
            if not rel.startswith('gui/shell/'):
                problems.append(f'{where}: {rel} includes {target}: only gui/shell may reach outside gui/ and engine/')
            continue
        layer, panel = gui_layer(rel)
        tlayer, tpanel = gui_layer(target)
        if layer not in GUI_ORDER or tlayer not in GUI_ORDER:
            problems.append(f'{where}: {rel} or {target} is in no declared gui/ folder ({", ".join(GUI_ORDER)})')
            continue
        if GUI_ORDER.index(tlayer) > GUI_ORDER.index(layer):
            problems.append(f'{where}: gui/{layer} includes {target}, a folder above it '
                            f'(order: {" < ".join(GUI_ORDER)})')
        elif layer == 'panels' and tlayer == 'panels' and panel != tpanel:
            problems.append(f'{where}: panel {panel} includes {target}: a panel includes no other panel '
                            '(ask the Workbench instead)')


def main():
    problems = []
    for top in ('engine', 'gui'):
        for path in sources(top):
            check(path, problems)
    for p in problems:
        print(p)
    print(f'includes: {len(problems)} include(s) against the declared order' if problems else
          'includes: every #include follows the declared order')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())

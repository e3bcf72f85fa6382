#include "findbar.h"

#include <QGridLayout>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QToolButton>
#include <Qsci/qsciscintilla.h>

namespace Kp {

FindBar::FindBar(QsciScintilla *editor, QWidget *parent)
    : QWidget(parent)
    , m_editor(editor)
{
    setObjectName(QStringLiteral("findBar"));
    auto *grid = new QGridLayout(this);
    grid->setContentsMargins(4, 2, 4, 2);
    m_find = new QLineEdit(this);
    m_find->setObjectName(QStringLiteral("findField"));
    m_find->setPlaceholderText(tr("Find"));
    m_find->setClearButtonEnabled(true);
    m_find->installEventFilter(this);
    // Beside the editor, which may be narrow (1024 pixels, three docks):
    // arrows and short toggles, not words, so the field keeps room for
    // what is typed in it, and the bar never widens the window (below).
    auto *prev = new QToolButton(this);
    prev->setObjectName(QStringLiteral("findPrevious"));
    prev->setArrowType(Qt::UpArrow);
    prev->setToolTip(tr("Previous match (Shift+Enter, Shift+F3)"));
    auto *next = new QToolButton(this);
    next->setObjectName(QStringLiteral("findNext"));
    next->setArrowType(Qt::DownArrow);
    next->setToolTip(tr("Next match (Enter, F3)"));
    m_case = new QToolButton(this);
    m_case->setObjectName(QStringLiteral("findCase"));
    m_case->setText(QStringLiteral("Aa"));
    m_case->setCheckable(true);
    m_case->setToolTip(tr("Match case"));
    m_word = new QToolButton(this);
    m_word->setObjectName(QStringLiteral("findWholeWord"));
    m_word->setText(tr("Word"));
    m_word->setCheckable(true);
    m_word->setToolTip(tr("Whole words only"));
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("findStatus"));
    auto *close = new QToolButton(this);
    close->setText(QStringLiteral("×"));
    close->setToolTip(tr("Close (Esc)"));
    close->setAutoRaise(true);
    // The fields share the stretching column; the buttons of each row sit
    // in their own row beside it, so one row's do not widen the other's.
    const auto buttons = [this](std::initializer_list<QWidget *> widgets) {
        auto *row = new QHBoxLayout;
        row->setSpacing(2);
        for (QWidget *w : widgets) {
            row->addWidget(w);
        }
        row->addStretch(1);
        return row;
    };
    grid->addWidget(m_find, 0, 0);
    grid->addLayout(buttons({prev, next, m_case, m_word, m_status, close}), 0, 1);
    grid->setColumnStretch(0, 1);
    // Its minimum is not the editor area's: a window narrower than the whole
    // bar squeezes the bar, never grows past the screen when it opens.
    setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);

    m_replace = new QLineEdit(this);
    m_replace->setObjectName(QStringLiteral("replaceField"));
    m_replace->setPlaceholderText(tr("Replace with"));
    m_replace->installEventFilter(this);
    auto *replace = new QPushButton(tr("Replace"), this);
    replace->setToolTip(tr("Replace this match and find the next (Enter in this field)"));
    auto *all = new QPushButton(tr("All"), this);
    all->setObjectName(QStringLiteral("replaceAll"));
    all->setToolTip(tr("Replace every match, as one undo step"));
    grid->addWidget(m_replace, 1, 0);
    grid->addLayout(buttons({replace, all}), 1, 1);
    m_replaceRow = m_replace;
    connect(prev, &QToolButton::clicked, this, [this] { findNext(true); });
    connect(next, &QToolButton::clicked, this, [this] { findNext(); });
    connect(replace, &QPushButton::clicked, this, &FindBar::replaceOne);
    connect(all, &QPushButton::clicked, this, &FindBar::replaceAll);
    connect(close, &QToolButton::clicked, this, [this] {
        hide();
        m_editor->setFocus();
    });
    // Replace's own widgets follow the field's visibility.
    m_replace->setProperty("replaceRow", true);
    replace->setProperty("replaceRow", true);
    all->setProperty("replaceRow", true);
    hide();
}

void FindBar::open(bool replace)
{
    for (QWidget *w : findChildren<QWidget *>()) {
        if (w->property("replaceRow").toBool()) {
            w->setVisible(replace);
        }
    }
    // The selection, when it is one line, is what the user wants to find.
    if (m_editor->hasSelectedText() && !m_editor->selectedText().contains(QLatin1Char('\n'))) {
        m_find->setText(m_editor->selectedText());
    }
    show();
    m_find->setFocus();
    m_find->selectAll();
}

bool FindBar::findNext(bool backwards)
{
    const QString text = m_find->text();
    if (text.isEmpty()) {
        m_status->clear();
        return false;
    }
    int line = 0, index = 0;
    if (backwards && m_editor->hasSelectedText()) {
        int l2 = 0, i2 = 0;
        m_editor->getSelection(&line, &index, &l2, &i2); // search before the current match
    } else {
        m_editor->getCursorPosition(&line, &index);
    }
    const bool found =
        m_editor->findFirst(text, false, m_case->isChecked(), m_word->isChecked(), true, !backwards, line, index, true);
    QString status = tr("Not found");
    if (found) {
        // Which match of how many: the selection Scintilla just made starts one of them.
        const QList<int> matches = matchPositions();
        const int at = int(m_editor->SendScintilla(QsciScintilla::SCI_GETSELECTIONSTART));
        const qsizetype k = matches.indexOf(at);
        status =
            k >= 0 ? tr("%1 of %2").arg(k + 1).arg(matches.size()) : tr("%n match(es)", nullptr, int(matches.size()));
    }
    m_status->setText(status);
    m_find->setStyleSheet(found ? QString() : QStringLiteral("background: #fde8e8;"));
    return found;
}

QList<int> FindBar::matchPositions() const
{
    QList<int> at;
    const QString needle = m_find->text();
    if (needle.isEmpty()) {
        return at;
    }
    const bool cs = m_case->isChecked();
    // Scintilla positions are UTF-8 bytes; search the bytes so they line up.
    const QByteArray text = cs ? m_editor->text().toUtf8() : m_editor->text().toLower().toUtf8();
    const QByteArray what = cs ? needle.toUtf8() : needle.toLower().toUtf8();
    const auto wordChar = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    };
    for (qsizetype i = text.indexOf(what); i >= 0; i = text.indexOf(what, i + 1)) {
        if (m_word->isChecked()) {
            const qsizetype end = i + what.size();
            if ((i > 0 && wordChar(text[i - 1])) || (end < text.size() && wordChar(text[end]))) {
                continue;
            }
        }
        at << int(i);
    }
    return at;
}

bool FindBar::selectionMatches() const
{
    const QString sel = m_editor->selectedText();
    return !sel.isEmpty() &&
           sel.compare(m_find->text(), m_case->isChecked() ? Qt::CaseSensitive : Qt::CaseInsensitive) == 0;
}

void FindBar::replaceOne()
{
    if (selectionMatches()) {
        m_editor->replaceSelectedText(m_replace->text());
    }
    findNext();
}

int FindBar::replaceAll()
{
    const QString text = m_find->text();
    if (text.isEmpty()) {
        return 0;
    }
    int count = 0;
    m_editor->beginUndoAction();
    bool found = m_editor->findFirst(text, false, m_case->isChecked(), m_word->isChecked(), false, true, 0, 0, false);
    while (found) {
        m_editor->replace(m_replace->text());
        ++count;
        found = m_editor->findNext();
    }
    m_editor->endUndoAction();
    m_status->setText(tr("%n replaced", nullptr, count));
    return count;
}

bool FindBar::eventFilter(QObject *watched, QEvent *event)
{
    // Esc closes the bar rather than aborting a run; Enter searches.
    if (event->type() == QEvent::ShortcutOverride) {
        auto *key = static_cast<QKeyEvent *>(event);
        if (key->key() == Qt::Key_Escape) {
            event->accept();
            return true;
        }
    } else if (event->type() == QEvent::KeyPress) {
        auto *key = static_cast<QKeyEvent *>(event);
        if (key->key() == Qt::Key_Escape) {
            hide();
            m_editor->setFocus();
            return true;
        }
        if (key->key() == Qt::Key_Return || key->key() == Qt::Key_Enter) {
            if (watched == m_replace) {
                replaceOne();
            } else {
                findNext(key->modifiers() & Qt::ShiftModifier);
            }
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

} // namespace Kp

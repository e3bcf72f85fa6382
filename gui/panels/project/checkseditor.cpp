#include "checkseditor.h"

#include "project/orderedjson.h"
#include "project/project.h"
#include "workbench/projectdocument.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include <utility>

namespace Kp {

namespace {

const QString kHidden = QStringLiteral("hidden");

/** The kinds in the order the chooser lists them, each with what it checks. */
struct KindRow
{
    CheckSpec::Kind kind;
    const char *text;
};
const KindRow kKinds[] = {
    {CheckSpec::Kind::Expected, QT_TRANSLATE_NOOP("ChecksEditor", "expected: an expression per element")},
    {CheckSpec::Kind::Reference, QT_TRANSLATE_NOOP("ChecksEditor", "reference: a buffer of the reference run")},
    {CheckSpec::Kind::Npy, QT_TRANSLATE_NOOP("ChecksEditor", "npy: a .npy file beside the project")},
    {CheckSpec::Kind::Permutation, QT_TRANSLATE_NOOP("ChecksEditor", "permutation: the same values in any order")},
    {CheckSpec::Kind::Set, QT_TRANSLATE_NOOP("ChecksEditor", "set: the same distinct values")},
    {CheckSpec::Kind::Range, QT_TRANSLATE_NOOP("ChecksEditor", "range: every value within bounds")},
    {CheckSpec::Kind::Printed, QT_TRANSLATE_NOOP("ChecksEditor", "printed: the device printf output")},
};

/** A number typed as a number; anything else stays text, so the reader names what is wrong with it. */
QJsonValue numberOrText(const QString &text)
{
    bool ok = false;
    const double d = text.trimmed().toDouble(&ok);
    return ok ? QJsonValue(d) : QJsonValue(text.trimmed());
}

/** "0, 4" as [0, 4]; an item that is no number stays text for the reader's message. */
QJsonArray coordinates(const QString &text)
{
    QJsonArray a;
    for (const QString &item : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        a.append(numberOrText(item));
    }
    return a;
}

QString coordinatesText(const QList<qint64> &list)
{
    QStringList items;
    for (qint64 x : list) {
        items << QString::number(x);
    }
    return items.join(QStringLiteral(", "));
}

QString optionalNumber(const std::optional<double> &v)
{
    return v ? numberText(*v) : QString();
}

} // namespace

ChecksEditor::ChecksEditor(ProjectDocument &doc, QWidget *parent)
    : QWidget(parent)
    , m_doc(doc)
{
    setObjectName(QStringLiteral("checksEditor"));
    m_list = new QListWidget(this);
    m_list->setObjectName(QStringLiteral("checksList"));
    m_list->setMinimumHeight(60);
    m_add = new QPushButton(tr("&Add"), this);
    m_add->setObjectName(QStringLiteral("addCheck"));
    m_remove = new QPushButton(tr("Remove"), this);
    m_remove->setObjectName(QStringLiteral("removeCheck"));
    m_up = new QPushButton(tr("Up"), this);
    m_up->setObjectName(QStringLiteral("checkUp"));
    m_down = new QPushButton(tr("Down"), this);
    m_down->setObjectName(QStringLiteral("checkDown"));
    auto *listButtons = new QHBoxLayout;
    for (QPushButton *b : {m_add, m_remove, m_up, m_down}) {
        listButtons->addWidget(b);
    }
    listButtons->addStretch(1);

    m_formArea = new QWidget(this);
    m_form = new QFormLayout(m_formArea);
    m_form->setContentsMargins(0, 0, 0, 0);
    m_form->setRowWrapPolicy(QFormLayout::WrapLongRows);
    m_form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    const auto line = [this](const char *name, const QString &placeholder) {
        auto *e = new QLineEdit(m_formArea);
        e->setObjectName(QString::fromLatin1(name));
        e->setPlaceholderText(placeholder);
        connect(e, &QLineEdit::returnPressed, this, &ChecksEditor::apply);
        return e;
    };
    m_name = line("checkName", tr("(none: buffer and target)"));
    m_kind = new QComboBox(m_formArea);
    m_kind->setObjectName(QStringLiteral("checkKind"));
    for (const KindRow &k : kKinds) {
        m_kind->addItem(tr(k.text), CheckSpec::kindName(k.kind));
    }
    m_buffer = new QComboBox(m_formArea);
    m_buffer->setObjectName(QStringLiteral("checkBuffer"));
    m_target = line("checkTarget", QString());
    m_other = new QComboBox(m_formArea);
    m_other->setObjectName(QStringLiteral("checkOther"));
    m_otherWhen = new QComboBox(m_formArea);
    m_otherWhen->setObjectName(QStringLiteral("checkOtherWhen"));
    m_otherWhen->addItems({tr("its initial contents"), tr("after the reference run")});
    m_printedMode = new QComboBox(m_formArea);
    m_printedMode->setObjectName(QStringLiteral("checkPrintedMode"));
    m_printedMode->addItems({tr("matches (a regular expression)"), tr("equals (the whole output)")});
    m_min = line("checkMin", tr("none: no lower bound"));
    m_max = line("checkMax", tr("none: no upper bound"));
    m_abs = line("checkAbs", tr("0"));
    m_rel = line("checkRel", tr("0"));
    m_ulp = line("checkUlp", tr("0"));
    m_begin = line("checkBegin", tr("x, y, z (none: the whole buffer)"));
    m_end = line("checkEnd", tr("x, y, z, exclusive"));
    m_seeds = new QSpinBox(m_formArea);
    m_seeds->setObjectName(QStringLiteral("checkSeeds"));
    m_seeds->setRange(1, kMaxCheckSeeds);
    m_seeds->setToolTip(tr("Runs with other seeds for the random buffers: a kernel that hard-codes one input's "
                           "answer fails"));
    m_nan = new QCheckBox(tr("NaN passes where the expected value is NaN"), m_formArea);
    m_nan->setObjectName(QStringLiteral("checkNan"));
    m_hidden = new QCheckBox(tr("Hidden: graded, left out of the students' copy"), m_formArea);
    m_hidden->setObjectName(QStringLiteral("checkHidden"));
    auto *tolerance = new QWidget(m_formArea);
    auto *tolRow = new QHBoxLayout(tolerance);
    tolRow->setContentsMargins(0, 0, 0, 0);
    for (auto [label, edit] : {std::pair{tr("abs"), m_abs}, std::pair{tr("rel"), m_rel}, std::pair{tr("ulp"), m_ulp}}) {
        tolRow->addWidget(new QLabel(label, tolerance));
        tolRow->addWidget(edit, 1);
    }
    tolerance->setObjectName(QStringLiteral("checkTolerance"));

    m_form->addRow(tr("Name:"), m_name);
    m_form->addRow(tr("Kind:"), m_kind);
    m_form->addRow(tr("Buffer:"), m_buffer);
    m_form->addRow(tr("Expression:"), m_target);
    m_form->addRow(tr("Compared with:"), m_other);
    m_form->addRow(tr("Taken from:"), m_otherWhen);
    m_form->addRow(tr("Output:"), m_printedMode);
    m_form->addRow(tr("Min:"), m_min);
    m_form->addRow(tr("Max:"), m_max);
    m_form->addRow(tr("Tolerance:"), tolerance);
    m_form->addRow(tr("Region begin:"), m_begin);
    m_form->addRow(tr("Region end:"), m_end);
    m_form->addRow(tr("Seed runs:"), m_seeds);
    m_form->addRow(m_nan);
    m_form->addRow(m_hidden);
    m_apply = new QPushButton(tr("A&pply"), m_formArea);
    m_apply->setObjectName(QStringLiteral("applyCheck"));
    m_revert = new QPushButton(tr("Revert"), m_formArea);
    auto *formButtons = new QHBoxLayout;
    formButtons->addWidget(m_apply);
    formButtons->addWidget(m_revert);
    formButtons->addStretch(1);
    m_form->addRow(formButtons);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 4, 0, 0);
    layout->addWidget(m_list, 1);
    layout->addLayout(listButtons);
    layout->addWidget(m_formArea);

    connect(m_kind, &QComboBox::currentIndexChanged, this, &ChecksEditor::showKindFields);
    connect(m_list, &QListWidget::currentRowChanged, this, &ChecksEditor::follow);
    connect(m_add, &QPushButton::clicked, this, &ChecksEditor::addCheck);
    connect(m_remove, &QPushButton::clicked, this, &ChecksEditor::removeCheck);
    connect(m_up, &QPushButton::clicked, this, [this] { moveCheck(-1); });
    connect(m_down, &QPushButton::clicked, this, [this] { moveCheck(1); });
    connect(m_apply, &QPushButton::clicked, this, &ChecksEditor::apply);
    connect(m_revert, &QPushButton::clicked, this, [this] {
        if (m_shown) {
            loadForm(*m_shown);
        }
    });
    m_formArea->setEnabled(false);
    showKindFields();
}

CheckSpec::Kind ChecksEditor::kind() const
{
    const int i = qBound(0, m_kind->currentIndex(), int(std::size(kKinds)) - 1);
    return kKinds[i].kind;
}

void ChecksEditor::showKindFields()
{
    const CheckSpec::Kind k = kind();
    const bool printed = k == CheckSpec::Kind::Printed;
    const bool collection = k == CheckSpec::Kind::Permutation || k == CheckSpec::Kind::Set;
    const bool elementwise =
        k == CheckSpec::Kind::Expected || k == CheckSpec::Kind::Reference || k == CheckSpec::Kind::Npy;
    const bool target = k == CheckSpec::Kind::Expected || k == CheckSpec::Kind::Npy || printed;
    m_form->setRowVisible(m_buffer, !printed);
    m_form->setRowVisible(m_target, target);
    m_form->setRowVisible(m_other, collection || k == CheckSpec::Kind::Reference);
    m_form->setRowVisible(m_otherWhen, collection);
    m_form->setRowVisible(m_printedMode, printed);
    m_form->setRowVisible(m_min, k == CheckSpec::Kind::Range);
    m_form->setRowVisible(m_max, k == CheckSpec::Kind::Range);
    m_form->setRowVisible(m_abs->parentWidget(), elementwise);
    m_form->setRowVisible(m_begin, elementwise || k == CheckSpec::Kind::Range);
    m_form->setRowVisible(m_end, elementwise || k == CheckSpec::Kind::Range);
    m_form->setRowVisible(m_nan, !printed && !collection);
    if (auto *label = qobject_cast<QLabel *>(m_form->labelForField(m_target))) {
        label->setText(k == CheckSpec::Kind::Npy ? tr("File:") : printed ? tr("Text:") : tr("Expression:"));
    }
    m_target->setPlaceholderText(k == CheckSpec::Kind::Npy ? tr("expected.npy, beside the project")
                                 : printed                 ? tr("e.g. sum = [0-9]+")
                                                           : tr("e.g. a + b (x, y, z and the buffers' names)"));
    if (auto *label = qobject_cast<QLabel *>(m_form->labelForField(m_other))) {
        label->setText(k == CheckSpec::Kind::Reference ? tr("Reference buffer:") : tr("Compared with:"));
    }
}

void ChecksEditor::showChecks(const Project &p)
{
    const int keep = m_selectAfterEdit >= 0 ? m_selectAfterEdit : m_list->currentRow();
    m_selectAfterEdit = -1;
    QStringList names;
    for (const BufferSpec &b : p.buffers) {
        names << b.name;
    }
    for (QComboBox *combo : {m_buffer, m_other}) {
        const QString current = combo->currentText();
        QStringList items;
        for (int i = 0; i < combo->count(); ++i) {
            items << combo->itemText(i);
        }
        if (items != names) {
            const QSignalBlocker block(combo);
            combo->clear();
            combo->addItems(names);
            combo->setCurrentText(current);
        }
    }
    {
        const QSignalBlocker block(m_list);
        m_list->clear();
        for (const CheckSpec &c : p.checks) {
            const bool hidden = c.unknown.value(kHidden).toBool(false);
            m_list->addItem(hidden ? tr("%1 (hidden)").arg(c.displayName()) : c.displayName());
        }
    }
    const int row = p.checks.isEmpty() ? -1 : qBound(0, keep, int(p.checks.size()) - 1);
    {
        const QSignalBlocker block(m_list);
        m_list->setCurrentRow(row);
    }
    follow(row);
}

void ChecksEditor::follow(int row)
{
    const QList<CheckSpec> &checks = m_doc.project().checks;
    // The form is refilled only when it shows another check, or this one
    // changed in the project (an undo): an edit elsewhere keeps what is typed.
    if (row >= 0 && row < checks.size() && (row != m_shownRow || !m_shown || !(*m_shown == checks[row]))) {
        loadForm(checks[row]);
        m_shownRow = row;
    }
    if (row < 0) {
        m_shown.reset();
        m_shownRow = -1;
    }
    m_formArea->setEnabled(row >= 0);
    m_remove->setEnabled(row >= 0);
    m_up->setEnabled(row > 0);
    m_down->setEnabled(row >= 0 && row + 1 < m_list->count());
}

void ChecksEditor::loadForm(const CheckSpec &c)
{
    m_shown = c;
    for (qsizetype i = 0; i < qsizetype(std::size(kKinds)); ++i) {
        if (kKinds[i].kind == c.kind) {
            m_kind->setCurrentIndex(int(i));
        }
    }
    m_name->setText(c.name);
    m_buffer->setCurrentText(c.buffer);
    m_target->setText(c.kind == CheckSpec::Kind::Npy       ? c.npy
                      : c.kind == CheckSpec::Kind::Printed ? c.printed
                                                           : c.expected);
    m_other->setCurrentText(c.kind == CheckSpec::Kind::Reference ? c.reference : c.other);
    m_otherWhen->setCurrentIndex(c.otherFromReference ? 1 : 0);
    m_printedMode->setCurrentIndex(c.printedIsPattern || c.printed.isEmpty() ? 0 : 1);
    m_min->setText(optionalNumber(c.rangeMin));
    m_max->setText(optionalNumber(c.rangeMax));
    m_abs->setText(c.tolerance && c.tolerance->abs != 0 ? numberText(c.tolerance->abs) : QString());
    m_rel->setText(c.tolerance && c.tolerance->rel != 0 ? numberText(c.tolerance->rel) : QString());
    m_ulp->setText(c.tolerance && c.tolerance->ulp != 0 ? QString::number(c.tolerance->ulp) : QString());
    m_begin->setText(c.region ? coordinatesText(c.region->begin) : QString());
    m_end->setText(c.region ? coordinatesText(c.region->end) : QString());
    m_seeds->setValue(c.seeds);
    m_nan->setChecked(c.nan);
    m_hidden->setChecked(c.unknown.value(kHidden).toBool(false));
    showKindFields();
}

QJsonObject ChecksEditor::formJson() const
{
    // Keys this version does not know stay as they were; "hidden" is the form's.
    QJsonObject o = m_shown ? m_shown->unknown : QJsonObject();
    o.remove(kHidden);
    const CheckSpec::Kind k = kind();
    const QString name = m_name->text().trimmed();
    if (!name.isEmpty()) {
        o.insert(QStringLiteral("name"), name);
    }
    if (k != CheckSpec::Kind::Printed) {
        o.insert(QStringLiteral("buffer"), m_buffer->currentText());
    }
    const QString target = m_target->text().trimmed();
    switch (k) {
    case CheckSpec::Kind::Expected: o.insert(QStringLiteral("expected"), target); break;
    case CheckSpec::Kind::Npy: o.insert(QStringLiteral("npy"), target); break;
    case CheckSpec::Kind::Reference: o.insert(QStringLiteral("reference"), m_other->currentText()); break;
    case CheckSpec::Kind::Permutation:
    case CheckSpec::Kind::Set:
        o.insert(CheckSpec::kindName(k),
                 m_otherWhen->currentIndex() == 1
                     ? QJsonValue(QJsonObject{{QStringLiteral("reference"), m_other->currentText()}})
                     : QJsonValue(m_other->currentText()));
        break;
    case CheckSpec::Kind::Range: {
        const auto bound = [](const QLineEdit *e) {
            return e->text().trimmed().isEmpty() ? QJsonValue(QJsonValue::Null) : numberOrText(e->text());
        };
        o.insert(QStringLiteral("range"), QJsonArray{bound(m_min), bound(m_max)});
        break;
    }
    case CheckSpec::Kind::Printed:
        o.insert(QStringLiteral("printed"),
                 QJsonObject{{m_printedMode->currentIndex() == 0 ? QStringLiteral("matches") : QStringLiteral("equals"),
                              m_target->text()}});
        break;
    }
    const bool elementwise =
        k == CheckSpec::Kind::Expected || k == CheckSpec::Kind::Reference || k == CheckSpec::Kind::Npy;
    if (elementwise) {
        QJsonObject t;
        for (auto [key, edit] : {std::pair{QStringLiteral("abs"), m_abs}, std::pair{QStringLiteral("rel"), m_rel},
                                 std::pair{QStringLiteral("ulp"), m_ulp}}) {
            if (!edit->text().trimmed().isEmpty()) {
                t.insert(key, numberOrText(edit->text()));
            }
        }
        if (!t.isEmpty()) {
            o.insert(QStringLiteral("tolerance"), t);
        }
    }
    if (elementwise || k == CheckSpec::Kind::Range) {
        QJsonObject r;
        if (!m_begin->text().trimmed().isEmpty()) {
            r.insert(QStringLiteral("begin"), coordinates(m_begin->text()));
        }
        if (!m_end->text().trimmed().isEmpty()) {
            r.insert(QStringLiteral("end"), coordinates(m_end->text()));
        }
        if (!r.isEmpty()) {
            o.insert(QStringLiteral("region"), r); // one corner alone: the reader says the other is missing
        }
    }
    if (m_seeds->value() != 1) {
        o.insert(QStringLiteral("seeds"), m_seeds->value());
    }
    if (m_nan->isChecked() && k != CheckSpec::Kind::Printed && k != CheckSpec::Kind::Permutation &&
        k != CheckSpec::Kind::Set) {
        o.insert(QStringLiteral("nan"), true);
    }
    if (m_hidden->isChecked()) {
        o.insert(kHidden, true);
    }
    return o;
}

Status ChecksEditor::editChecks(const QString &label, int select, const std::function<void(QJsonArray &)> &change)
{
    m_selectAfterEdit = select;
    const Status s = m_doc.edit(label, [&](QJsonObject &o) {
        QJsonArray checks = o.value(QStringLiteral("checks")).toArray();
        change(checks);
        if (checks.isEmpty()) {
            o.remove(QStringLiteral("checks"));
        } else {
            o.insert(QStringLiteral("checks"), checks);
        }
    });
    m_selectAfterEdit = -1;
    Q_EMIT edited(s);
    return s;
}

Status ChecksEditor::apply()
{
    const int row = current();
    if (row < 0) {
        return Unit{};
    }
    const QJsonObject check = formJson();
    const Status s = editChecks(tr("Edit check %1").arg(row + 1), row, [&](QJsonArray &a) {
        if (row < a.size()) {
            a[row] = check;
        }
    });
    if (s) {
        // Accepted: the form shows the check as the project now has it.
        loadForm(m_doc.project().checks.value(row));
    }
    return s;
}

Status ChecksEditor::addCheck()
{
    const Project &p = m_doc.project();
    const int row = int(p.checks.size());
    QJsonObject check;
    if (p.buffers.isEmpty()) {
        // Without buffers only the printed output can be checked.
        check.insert(QStringLiteral("name"), tr("check %1").arg(row + 1));
        check.insert(QStringLiteral("printed"), QJsonObject{{QStringLiteral("matches"), QStringLiteral(".")}});
    } else {
        // The last buffer is most often the output; the expression is the user's to write.
        check.insert(QStringLiteral("name"), tr("check %1").arg(row + 1));
        check.insert(QStringLiteral("buffer"), p.buffers.last().name);
        check.insert(QStringLiteral("expected"), QStringLiteral("0"));
    }
    return editChecks(tr("Add check %1").arg(row + 1), row, [&](QJsonArray &a) { a.append(check); });
}

Status ChecksEditor::removeCheck()
{
    const int row = current();
    if (row < 0) {
        return Unit{};
    }
    return editChecks(tr("Remove check %1").arg(row + 1), qMax(0, row - 1), [&](QJsonArray &a) {
        if (row < a.size()) {
            a.removeAt(row);
        }
    });
}

Status ChecksEditor::moveCheck(int delta)
{
    const int row = current();
    const int to = row + delta;
    if (row < 0 || to < 0 || to >= m_list->count()) {
        return Unit{};
    }
    return editChecks(tr("Move check %1").arg(row + 1), to, [&](QJsonArray &a) {
        const QJsonValue moved = a.at(row);
        a.removeAt(row);
        a.insert(to, moved);
    });
}

void ChecksEditor::select(int row)
{
    m_list->setCurrentRow(row);
}

int ChecksEditor::current() const
{
    return m_list->currentRow();
}

} // namespace Kp

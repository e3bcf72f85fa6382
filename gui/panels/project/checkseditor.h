#pragma once

#include "check/checkspec.h"
#include "core/result.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QWidget>

#include <functional>
#include <optional>

class QCheckBox;
class QComboBox;
class QFormLayout;
class QLineEdit;
class QListWidget;
class QPushButton;
class QSpinBox;

namespace Kp {

class ProjectDocument;
struct Project;

/**
 * The project's checks (docs/checks.md) without JSON: a list to add,
 * remove and reorder them, and a form for the chosen one with every kind's
 * own fields (an expression, a buffer of the reference run, a .npy file,
 * another buffer as a multiset or a set, a range, the printed output),
 * tolerance, region, seed runs, NaN and "hidden" (graded, left out of the
 * students' copy). Apply (or Enter in a field) commits the form as one
 * ProjectDocument::edit: the project reader judges it, so a wrong field
 * gets the message a .kpg file gets ("checks[0].tolerance.ulp: must be at
 * least 0, got -1"), and Edit > Undo takes it back. GUI thread only.
 */
class ChecksEditor : public QWidget
{
    Q_OBJECT
public:
    ChecksEditor(ProjectDocument &doc, QWidget *parent = nullptr);

    /** Shows p's checks; the form follows the chosen one unless it is unchanged in the project. */
    void showChecks(const Project &p);

    /** Chooses check row (its form shows). */
    void select(int row);
    int current() const;

    /** Adds a check (an expression check of the last buffer, or a printed-output check without buffers). */
    Status addCheck();
    /** Removes the chosen check. */
    Status removeCheck();
    /** Moves the chosen check up (-1) or down (+1). */
    Status moveCheck(int delta);
    /** Commits the form to the chosen check. */
    Status apply();

    QListWidget *list() const { return m_list; }
    QLineEdit *nameField() const { return m_name; }
    QComboBox *kindChooser() const { return m_kind; }
    QComboBox *bufferChooser() const { return m_buffer; }
    /** Expected: the expression; npy: the file; printed: the pattern or text. */
    QLineEdit *targetField() const { return m_target; }
    /** Reference: the buffer of the reference run; permutation and set: the buffer compared with. */
    QComboBox *otherChooser() const { return m_other; }
    /** Permutation and set: the other buffer's initial contents (0) or after the reference run (1). */
    QComboBox *otherWhenChooser() const { return m_otherWhen; }
    /** Printed: "matches" a regular expression (0) or "equals" the whole output (1). */
    QComboBox *printedModeChooser() const { return m_printedMode; }
    QLineEdit *minField() const { return m_min; }
    QLineEdit *maxField() const { return m_max; }
    QLineEdit *absField() const { return m_abs; }
    QLineEdit *relField() const { return m_rel; }
    QLineEdit *ulpField() const { return m_ulp; }
    QLineEdit *beginField() const { return m_begin; }
    QLineEdit *endField() const { return m_end; }
    QSpinBox *seedsField() const { return m_seeds; }
    QCheckBox *nanBox() const { return m_nan; }
    QCheckBox *hiddenBox() const { return m_hidden; }
    QPushButton *applyButton() const { return m_apply; }

    /** The chosen check as the form describes it, in the .kpg's JSON. */
    QJsonObject formJson() const;

Q_SIGNALS:
    /** An edit was tried: its outcome (the panel shows a refusal's message). */
    void edited(const Status &status);

private:
    /** Fills the form from check. */
    void loadForm(const CheckSpec &check);
    /** The form follows list row (see the .cpp for when it is refilled). */
    void follow(int row);
    /** Shows only the fields of the chosen kind, with the target's label for it. */
    void showKindFields();
    CheckSpec::Kind kind() const;
    /** Replaces the "checks" array through the document as one undoable edit; select is chosen afterwards. */
    Status editChecks(const QString &label, int select, const std::function<void(QJsonArray &)> &change);

    ProjectDocument &m_doc;
    QListWidget *m_list;
    QPushButton *m_add;
    QPushButton *m_remove;
    QPushButton *m_up;
    QPushButton *m_down;
    QWidget *m_formArea;
    QFormLayout *m_form;
    QLineEdit *m_name;
    QComboBox *m_kind;
    QComboBox *m_buffer;
    QLineEdit *m_target;
    QComboBox *m_other;
    QComboBox *m_otherWhen;
    QComboBox *m_printedMode;
    QLineEdit *m_min;
    QLineEdit *m_max;
    QLineEdit *m_abs;
    QLineEdit *m_rel;
    QLineEdit *m_ulp;
    QLineEdit *m_begin;
    QLineEdit *m_end;
    QSpinBox *m_seeds;
    QCheckBox *m_nan;
    QCheckBox *m_hidden;
    QPushButton *m_apply;
    QPushButton *m_revert;
    std::optional<CheckSpec> m_shown; ///< the check the form was filled from
    int m_shownRow = -1;
    int m_selectAfterEdit = -1;
};

} // namespace Kp

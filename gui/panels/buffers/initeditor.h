#pragma once

#include "buffers/bufferspec.h"

#include <QJsonObject>
#include <QWidget>

class QComboBox;
class QFormLayout;
class QGridLayout;
class QLabel;
class QLineEdit;
class QPushButton;
class QStackedWidget;

namespace Kp {

/**
 * A buffer's initial contents as a form: a kind chooser (zeros, constant,
 * ramp, random, expression, .npy file, image) and the fields of that kind.
 * Each change is committed (committed()) when a field loses the focus or
 * Enter is pressed, or when another kind is chosen; the document validates
 * it as it validates the .kpg file and the owner shows the verdict. GUI
 * thread only.
 */
class InitEditor : public QWidget
{
    Q_OBJECT
public:
    explicit InitEditor(QWidget *parent = nullptr);

    /** Shows init (of a buffer of dtype) without committing anything. */
    void setInit(const BufferInit &init);
    /** The init the fields describe now, as .kpg JSON. */
    QJsonObject currentJson() const;

    // For tests: the widgets a user types into.
    QComboBox *kindChooser() const { return m_kind; }
    QLineEdit *field(const QString &key) const;
    QComboBox *distributionChooser() const { return m_distribution; }
    QComboBox *imageModeChooser() const { return m_imageMode; }

Q_SIGNALS:
    void committed(const QJsonObject &init);

private:
    QLineEdit *addField(QFormLayout *form, const QString &key, const QString &label, const QString &tip);
    QWidget *fileRow(const QString &key, const QString &filter);
    void commit();
    void showDistributionFields();

    QComboBox *m_kind = nullptr;
    QStackedWidget *m_pages = nullptr;
    QComboBox *m_distribution = nullptr;
    QComboBox *m_imageMode = nullptr;
    QGridLayout *m_randomGrid = nullptr;
    QMap<QString, QLineEdit *> m_fields; ///< "value", "start", "step", "min", ... "expr", "npy.file", "image.file"
    bool m_updating = false;
};

/** The init in words for a table cell: "random uniform [0, 1), seed 1", "expression sin(x)". */
QString describeInit(const BufferInit &init);

} // namespace Kp

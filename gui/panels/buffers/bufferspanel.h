#pragma once

#include "project/project.h"

#include <QJsonObject>
#include <QJsonValue>
#include <QWidget>

class QGroupBox;
class QLabel;
class QTableWidget;

namespace Kp {

class Workbench;

class HostBuffers;
class InitEditor;
class ProjectDocument;

/**
 * The Buffers panel: every buffer of the project with its dtype, shape,
 * initial contents and size in elements and bytes. Names and shapes are
 * edited in place, dtypes from a list, the selected buffer's initial
 * contents in a form beside the table (InitEditor);
 * like the launch panel it only reports changes, and the main window applies
 * them through the project's validation and shows the verdict with
 * setMessage(). GUI thread only.
 */
class BuffersPanel : public QWidget
{
    Q_OBJECT
public:
    explicit BuffersPanel(QWidget *parent = nullptr);
    /** The dock's panel: edits wb's document; its messages go to the Log. */
    BuffersPanel(Workbench &wb, QWidget *parent = nullptr);
    /**
     * Follows document: shows its buffers and scalars as they change, applies
     * this panel's edits to it (a refused one leaves its message and shows
     * the valid project again) and exports buffers from its host copies.
     * document is not owned and must outlive the panel.
     */
    void setDocument(ProjectDocument *document);

    /** Shows the buffers; sizes come from the resolved host copies when given. */
    void setProject(const Project &project, const HostBuffers *host);
    void setMessage(const QString &error);
    /**
     * Adds a buffer filled from the image or .npy at path. A file outside a
     * saved project's folder is copied into it first (the Log says so).
     */
    void importPath(const QString &path, bool image);

    QTableWidget *table() const { return m_table; }
    QTableWidget *scalarTable() const { return m_scalars; }
    int currentBuffer() const;
    InitEditor *initEditor() const { return m_initEditor; }
    QLabel *messageLabel() const { return m_message; }
    /** Selects buffers[index] (its row, its init in the form) and scrolls to it. */
    void selectBuffer(int index);

Q_SIGNALS:
    /** A cell of buffers[index] changed: key is "name", "dtype", "shape" or "init". */
    void edited(int index, const QString &key, const QJsonValue &value);
    /** Add (or, with a source index >= 0, duplicate) a buffer. */
    void addRequested(const QJsonObject &buffer);
    void removeRequested(int index);
    /** A cell of scalars[index] changed: key is "name", "type" or "value". */
    void scalarEdited(int index, const QString &key, const QJsonValue &value);
    void scalarAddRequested(const QJsonObject &scalar);
    void scalarRemoveRequested(int index);
    /** Write buffers[index]'s host contents to path (.npy, .csv or .png by extension). */
    void exportRequested(int index, const QString &path);
    /** A line for the Log ("Exported buffer 'c' to c.npy"). */
    void logMessage(const QString &text);

private:
    void onCellChanged(int row, int column);
    void reportCell(int row, int column);
    void importFile(bool image);
    void showInit();

    Project m_project;
    QTableWidget *m_table = nullptr;
    QTableWidget *m_scalars = nullptr;
    QLabel *m_message = nullptr;
    QGroupBox *m_initBox = nullptr;
    InitEditor *m_initEditor = nullptr;
    bool m_updating = false;
    bool m_holdInitForm = false; ///< a refused init edit: the form keeps the user's text
};

} // namespace Kp

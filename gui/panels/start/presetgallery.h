#pragma once

#include <QDialog>
#include <QImage>
#include <QList>
#include <QListWidget>
#include <QString>

class QHBoxLayout;
class QLineEdit;
class QVBoxLayout;

namespace Kp {

class Workbench;

struct HostBuffer;
struct Project;

/** A preset as the gallery lists it, read from its .kpg. */
struct PresetInfo
{
    QString name;        ///< its folder: "vector_add"
    QString path;        ///< its .kpg: ":/presets/vector_add/vector_add.kpg"
    QString title;       ///< the project's title, else the name
    QString description; ///< Markdown
    QString summary;     ///< the description's first paragraph as plain text
    QString kernel;      ///< the first launch's kernel
    QString output;      ///< the buffer a thumbnail shows: "float32 [1024, 1024]"
    QString error;       ///< why the .kpg could not be read (the card says so); empty when it could
};

/**
 * Every preset under root (the program's resources, ":/presets"): each
 * folder NAME holding NAME.kpg, sorted by name. Nothing is hard-coded: a
 * preset added to the resources shows up.
 */
QList<PresetInfo> listPresets(const QString &root = QStringLiteral(":/presets"));

/** The buffer of a project a thumbnail shows: the first 2-D (or [h, w, 4]) buffer not filled with random data. */
QString thumbnailBufferOf(const Project &project);

/**
 * A thumbnail of an image-like buffer (2-D, or RGBA [h, w, 4]) of size
 * size, nearest-neighbour, scalar values through viridis over their finite
 * range. A null image for buffers that are not images.
 */
QImage renderBufferThumbnail(const HostBuffer &buffer, const QSize &size);

/** A generic thumbnail, drawn: a grid of blocks, the kernel's name and the output's dtype and shape. */
QImage genericThumbnail(const PresetInfo &preset, const QSize &size);

/**
 * Thumbnails rendered from presets' own output images, kept in the user's
 * cache folder (thumbnails/NAME.png) once a run of that preset made one.
 */
QString thumbnailCachePath(const QString &presetName);
/** Stores a rendered thumbnail for a preset (written with writeOutput's care). */
bool storeThumbnail(const QString &presetName, const QImage &image);
/** The cached thumbnail, or a generic one. */
QImage presetThumbnail(const PresetInfo &preset, const QSize &size);

/**
 * The presets as cards (a list in icon mode): thumbnail, title and the
 * first lines of the description. Arrow keys move between cards; Enter or a
 * double-click opens one (presetActivated). GUI thread only.
 */
class PresetGallery : public QListWidget
{
    Q_OBJECT
public:
    explicit PresetGallery(QWidget *parent = nullptr);

    /** Lists the presets under root again (thumbnails included). */
    void reload(const QString &root = QStringLiteral(":/presets"));
    const QList<PresetInfo> &presets() const { return m_presets; }
    /** The preset of the current card, or an empty path. */
    QString currentPresetPath() const;
    /**
     * Shows only the cards whose title, kernel or folder name holds every
     * word of text (any case), or when none does, whose description does;
     * the first one shown becomes current. Returns how many are shown; an
     * empty text shows all.
     */
    int setFilter(const QString &text);

    static constexpr int kThumbWidth = 200;
    static constexpr int kThumbHeight = 120;

Q_SIGNALS:
    /** A card was opened: its .kpg. */
    void presetActivated(const QString &path);

private:
    QList<PresetInfo> m_presets;
};

/**
 * What the window shows when no project is open: a greeting, New Project
 * and Open buttons, and the presets gallery. GUI thread only.
 */
class StartPage : public QWidget
{
    Q_OBJECT
public:
    explicit StartPage(QWidget *parent = nullptr);
    /** The window's start page: a Run of a preset makes its card's thumbnail from the output. */
    StartPage(Workbench &wb, QWidget *parent = nullptr);
    /**
     * The gallery, made on first use (with its search field): reading every
     * preset and drawing its thumbnail was a fifth of the window's start,
     * paid even when a project opens and the start page is never seen.
     */
    PresetGallery *gallery();
    /** Narrows the gallery as the user types (PresetGallery::setFilter); Enter opens the first card shown. */
    QLineEdit *searchField();

Q_SIGNALS:
    void presetActivated(const QString &path);
    void newRequested();
    void openRequested();

protected:
    void showEvent(QShowEvent *event) override;

private:
    PresetGallery *m_gallery = nullptr;
    QLineEdit *m_search = nullptr;
    QVBoxLayout *m_layout = nullptr;
    QHBoxLayout *m_presetsRow = nullptr;
};

/** File > New from Preset: the gallery in a dialog; chosenPath() once accepted. */
class PresetDialog : public QDialog
{
    Q_OBJECT
public:
    explicit PresetDialog(QWidget *parent = nullptr);
    QString chosenPath() const { return m_chosen; }
    PresetGallery *gallery() const { return m_gallery; }
    QLineEdit *searchField() const { return m_search; }

private:
    PresetGallery *m_gallery;
    QLineEdit *m_search;
    QString m_chosen;
};

} // namespace Kp

#pragma once

#include "core/result.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QFile>
#include <QList>
#include <QString>

#include <memory>

class QSaveFile;

namespace Kp {

// Every file the engine, kpg and the GUI read or write goes through here, so
// hostile paths get one answer: a FIFO cannot block a read, a device cannot be
// read without end, and writing to /dev/null or a FIFO never replaces it with
// a regular file (docs/ARCHITECTURE.md, "Files and safety").

/** The largest .kpg project file read (its inline source is at most 4 MiB). */
constexpr qint64 kMaxProjectFileBytes = 16ll * 1024 * 1024;

/** The largest image file read for an image init. */
constexpr qint64 kMaxImageFileBytes = 1024ll * 1024 * 1024;

/**
 * Opens @p path for reading when it is a regular file (a symbolic link to one
 * is fine) of at most @p maxBytes. FIFOs, devices, sockets and folders are
 * refused by stat() before anything is opened, and checked again with fstat()
 * on the opened descriptor (opened non-blocking, so a FIFO swapped in between
 * cannot block), so the answer is about the file actually read.
 *
 * On failure the Error (BadInput) holds the reason alone, for the caller to
 * put after its own words: "it is a character device, not a regular file",
 * "it is 5.0 MiB (5242880 bytes); a source file may be at most 4.0 MiB
 * (4194304 bytes)", "No such file or directory". @p what names the file's
 * role in the size message ("a source file").
 */
Result<std::unique_ptr<QFile>> openRegularFile(const QString &path, qint64 maxBytes, const QString &what);

/**
 * Reads all of @p path as openRegularFile() opens it, never more than
 * @p maxBytes even if the file grows meanwhile. The error message is
 * "cannot read PATH: REASON".
 */
Result<QByteArray> readRegularFile(const QString &path, qint64 maxBytes, const QString &what);

/**
 * An output written piece by piece, with writeOutput()'s rules: a regular (or
 * new) file through QSaveFile, committed by commit() and left untouched if
 * the object is destroyed first; an existing non-regular file (/dev/null, a
 * FIFO, a character device) written in place, every write checked. Errors
 * read "cannot write PATH: REASON".
 */
class OutputFile
{
public:
    explicit OutputFile(const QString &path);
    ~OutputFile();
    OutputFile(const OutputFile &) = delete;
    OutputFile &operator=(const OutputFile &) = delete;

    Status open();
    Status write(QByteArrayView bytes);
    /** Makes a regular file appear under its name; closes a device or FIFO. */
    Status commit();

private:
    Error fail(const QString &reason) const;

    QString m_path;
    std::unique_ptr<QSaveFile> m_save; ///< a regular or new file
    int m_fd = -1;                     ///< an existing non-regular file
};

/**
 * Writes @p parts, one after the other, to @p path. A regular file (or a new
 * one) is written atomically with QSaveFile: readers never see half a file,
 * and a failed write leaves the old one. An existing file that is not regular
 * (/dev/null, /dev/stdout, a FIFO, a character device) is opened as it is,
 * without creating or renaming anything, and every write is checked; a FIFO
 * without a reader blocks until one opens it, as a shell redirection does.
 * Folders are refused. The error (BadInput) reads "cannot write PATH: REASON",
 * e.g. "cannot write /dev/full: no space left on device". @p what names the
 * output in messages that need it ("the PTX").
 */
Status writeOutput(const QString &path, const QList<QByteArrayView> &parts, const QString &what);

/** writeOutput() for one block of bytes. */
Status writeOutput(const QString &path, const QByteArray &bytes, const QString &what);

/**
 * Writes @p bytes to the process's standard output (descriptor 1), checking
 * every write: `kpg run --json - > /dev/full` fails instead of losing the
 * result. Flush any buffered stream on stdout first.
 */
Status writeStandardOutput(const QByteArray &bytes);

} // namespace Kp

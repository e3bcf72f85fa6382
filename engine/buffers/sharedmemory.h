#pragma once

#include "core/result.h"

#include <QString>

namespace Kp {

/**
 * Anonymous shared memory (memfd) mapped into this process. Host copies of
 * buffers live here: kpg-worker maps the same pages through path() and
 * registers them as pinned memory, so copies run at pinned speed straight
 * into memory the GUI reads, and a worker that dies loses nothing.
 *
 * Fresh memory reads as zeros and costs nothing until touched (the pages are
 * allocated lazily). Move-only; the mapping and the descriptor are released
 * by the destructor. Not thread-safe; the bytes themselves may be read from
 * any thread.
 */
class SharedMemory
{
public:
    SharedMemory() = default;
    ~SharedMemory();
    SharedMemory(SharedMemory &&other) noexcept;
    SharedMemory &operator=(SharedMemory &&other) noexcept;
    SharedMemory(const SharedMemory &) = delete;
    SharedMemory &operator=(const SharedMemory &) = delete;

    /** Creates bytes of zeroed shared memory (rounded up to whole pages in the mapping). */
    static Result<SharedMemory> create(qint64 bytes, const QString &label);

    /**
     * Maps memory another process created, by the path it gave
     * ("/proc/PID/fd/N"); used by kpg-worker.
     */
    static Result<SharedMemory> open(const QString &path, qint64 bytes);

    bool isValid() const { return m_data != nullptr; }
    void *data() const { return m_data; }
    qint64 size() const { return m_size; }
    /** The mapped length: size rounded up to whole pages (what cuMemHostRegister gets). */
    qint64 mappedSize() const { return m_mapped; }
    /** Where another process of this user opens the same memory. */
    QString path() const;
    /**
     * A number no other SharedMemory of this process gets: paths are reused
     * (a closed descriptor's number comes back), ids are not, so the worker
     * can tell a new buffer from an old one it still has mapped.
     */
    quint64 id() const { return m_id; }

private:
    void release();

    void *m_data = nullptr;
    qint64 m_size = 0;
    qint64 m_mapped = 0;
    int m_fd = -1;
    quint64 m_id = 0;
};

} // namespace Kp

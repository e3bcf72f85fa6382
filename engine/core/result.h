#pragma once

#include <QString>
#include <QVariantMap>

#include <optional>
#include <utility>
#include <variant>

namespace Kp {

/** What went wrong, as data: errors cross threads and processes as values. */
struct Error
{
    /** Stable machine-readable kinds; `kpg` maps them to exit codes. */
    enum class Code {
        Internal,     ///< a bug or an unexpected condition
        Usage,        ///< bad command line or request
        BadInput,     ///< a file or value the user gave is wrong
        NoDriver,     ///< libcuda.so.1 could not be loaded or initialised
        NoDevice,     ///< the driver works but shows no GPU
        NoCompiler,   ///< libnvrtc could not be loaded
        CompileError, ///< the kernel did not compile
        Fault,        ///< a kernel fault or a failed CUDA call
        Timeout,      ///< a request ran past its time limit
        WorkerDied,   ///< kpg-worker exited or was killed
        WorkerStart,  ///< kpg-worker could not be started
        Protocol,     ///< a malformed or mismatched message
        Cancelled,    ///< superseded by a newer request with the same tag, or shut down
    };

    QString where; ///< component that saw the error, e.g. "kpg-worker"
    Code code = Code::Internal;
    QString apiCall; ///< the failing API call, when there is one ("cuInit")
    QString message; ///< one sentence for the user
    /**
     * Where in a project the bad value is, as a JSON path into the .kpg:
     * "launches[0].grid[1]", "buffers[2].shape", "scalars[0].value". Empty
     * when the error is not about one field. Panels mark fields from this,
     * never from the message text; .kpg files and kpg show it as it is.
     */
    QString path = {};

    /** "where: message" (with the API call when known). */
    QString toString() const;

    QVariantMap toVariant() const;
    static Error fromVariant(const QVariantMap &map);
    static QString codeName(Code code);
    static std::optional<Code> codeFromName(const QString &name);
};

/** A value or an Error; a small stand-in for std::expected (C++23). */
template<typename T> class Result
{
public:
    Result(T value)
        : m_data(std::move(value))
    {
    }
    Result(Error error)
        : m_data(std::move(error))
    {
    }

    bool ok() const { return std::holds_alternative<T>(m_data); }
    explicit operator bool() const { return ok(); }

    const T &value() const & { return std::get<T>(m_data); }
    T &value() & { return std::get<T>(m_data); }
    T &&value() && { return std::get<T>(std::move(m_data)); }
    const T &operator*() const & { return value(); }
    const T *operator->() const { return &value(); }

    const Error &error() const { return std::get<Error>(m_data); }

private:
    std::variant<T, Error> m_data;
};

/** Result for operations with nothing to return. */
struct Unit
{
};
using Status = Result<Unit>;

} // namespace Kp

/** In tests: QVERIFY a Result and print its error when it failed. */
#define KP_VERIFY_RESULT(r)                                                                                            \
    do {                                                                                                               \
        const auto &kp_r_ = (r);                                                                                       \
        if (!kp_r_.ok())                                                                                               \
            QFAIL(qPrintable(kp_r_.error().toString()));                                                               \
    } while (false)

#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>

namespace Kp {

/** A module-scope __device__ or __constant__ variable as the PTX declares it. */
struct PtxGlobal
{
    QString name;             ///< the PTX symbol (C++ names of namespaced variables stay mangled)
    bool constant = false;    ///< __constant__ (.const) rather than __device__ (.global)
    bool initialised = false; ///< declared with an initializer in the source
    qint64 bytes = -1;        ///< its size from the declaration (type x vector x array extents); -1 when unsized
};

/** Every module-scope .global/.const variable of ptx, in order (printf's format strings left out). */
QList<PtxGlobal> ptxGlobals(const QByteArray &ptx);

/**
 * The variables without an initializer that the body of entry reads or
 * writes (named in an instruction: [c_Kernel], mov.u64 %rd, counter): the
 * project fills none of them, so the kernel sees zeros. Functions the entry
 * calls are not followed unless they were inlined, which NVRTC does for
 * almost every __device__ function.
 */
QList<PtxGlobal> unfilledGlobalsUsedBy(const QByteArray &ptx, const QString &entry);

/**
 * The global a project's "symbol" names, among globals: the PTX name itself,
 * a file-static variable as NVRTC may mangle it (_ZL8c_Kernel), or
 * "ns::name" as its mangled name (_ZN2ns4nameE). Null when none matches.
 */
const PtxGlobal *findPtxGlobal(const QList<PtxGlobal> &globals, const QString &symbol);

/** The name as the source writes it: "d" for _ZN2ns1dE, "table" for _ZL5table; other names as they are. */
QString ptxGlobalSourceName(const QString &ptxName);

/** "__constant__ variable 'c_Kernel' (68 bytes)", for messages. */
QString ptxGlobalText(const PtxGlobal &g);

} // namespace Kp

#pragma once

#include <QtGlobal>

#include <algorithm>
#include <thread>
#include <vector>

namespace Kp {

/** How many threads a pass over work values is worth: below ~256k values a thread costs more than it saves. */
inline int threadsFor(qint64 work)
{
    constexpr qint64 kPerThread = 256 * 1024;
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    return static_cast<int>(std::clamp<qint64>(work / kPerThread, 1, std::min<unsigned>(hw, 16)));
}

/**
 * Runs fn(chunk, begin, end) over [0, count) cut into `threads` chunks of
 * equal size (the last ones may be short; an empty one is not run), chunk 0
 * on the calling thread. With one thread, or fewer than two values, it is
 * fn(0, 0, count) here.
 */
template<typename Fn> void parallelChunks(qint64 count, int threads, Fn &&fn)
{
    if (threads <= 1 || count < 2) {
        fn(0, qint64(0), count);
        return;
    }
    const qint64 per = (count + threads - 1) / threads;
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) {
        const qint64 b = std::min(count, t * per);
        const qint64 e = std::min(count, b + per);
        if (b < e) {
            pool.emplace_back([&fn, t, b, e] { fn(t, b, e); });
        }
    }
    fn(0, qint64(0), std::min(count, per));
    for (std::thread &th : pool) {
        th.join();
    }
}

/** parallelChunks for work that needs no chunk number: fn(begin, end). */
template<typename Fn> void parallelFor(qint64 count, int threads, Fn &&fn)
{
    parallelChunks(count, threads, [&fn](int, qint64 b, qint64 e) { fn(b, e); });
}

} // namespace Kp

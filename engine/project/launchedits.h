#pragma once

#include "core/result.h"
#include "project.h"

#include <QJsonObject>
#include <QJsonValue>
#include <QMap>
#include <QString>
#include <QStringList>

namespace Kp {

/**
 * The edits the Launch panel makes to a project's launch steps, as pure
 * functions of the project's JSON and the compiled kernels: what a new step
 * looks like, how a step's arguments are written, what "Create and bind"
 * adds. The panel only shows them and emits the result (tst_launchedits).
 */
namespace LaunchEdits {

/** Elements of a buffer created for a parameter, and the value of an integer scalar created beside it. */
constexpr int kDefaultElements = 1024;

/** A field's text as JSON: a number when it reads as one, else the (trimmed) text, an expression. */
QJsonValue numberOrText(const QString &text);

/**
 * Whether "Create and bind" can make something for the parameter: a buffer
 * for a pointer, a scalar for a number or a half passed by value; not a
 * struct or a vector by value, which no scalar can hold.
 */
bool canCreateFor(const KernelParam &p);

/** A step's bindings from its JSON args (array by position, or object by name), keyed by parameter name. */
QMap<QString, QJsonValue> bindings(const QJsonValue &args, const KernelInfo &kernel);

/**
 * The args of a step binding kernel's parameters as `bound` says: by position
 * when every parameter is bound (the compact form the presets use) and byName
 * is false, else by parameter name, which allows gaps.
 */
QJsonValue args(const KernelInfo &kernel, const QMap<QString, QJsonValue> &bound, bool byName);

/**
 * A new launch step for kernel: block 256, a ceil_div grid over the size
 * the kernel most likely covers (an integer parameter, else the first
 * pointer's buffer), and every parameter bound by name to the buffer or
 * scalar of that name when one exists.
 */
QJsonObject defaultStep(const KernelInfo &kernel, const Project &project);

/**
 * A new step of kind ("copy-to-device", "copy-to-host", "memset",
 * "record", "wait") for project: on its first buffer (a copy to the host
 * on its last), with an event name not yet used. An error, in the Launch
 * panel's words, when the project lacks what it needs.
 */
Result<QJsonObject> defaultOtherStep(const QString &kind, const Project &project);

/**
 * The buffers and scalars a step still lacks: one per unbound parameter
 * (of `only`, when given), named and typed after it, with _2, _3 ... when
 * the name is taken (a pointer to const data starts random, any other
 * buffer zeros; an integer scalar kDefaultElements, any other 1). Appended
 * to o's "buffers" and "scalars" and bound in the step's args; structs and
 * vectors by value are left unbound. A step index out of range changes
 * nothing.
 */
void createMissing(QJsonObject &o, int step, const KernelInfo &kernel, const QStringList &only = {});

/** "copy x → device", "record event done", "saxpy": a step in words, as the step list shows it. */
QString stepTitle(const LaunchStep &step);

} // namespace LaunchEdits
} // namespace Kp

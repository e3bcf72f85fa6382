#pragma once

#include <QTextBrowser>

namespace Kp {

class Workbench;

struct Project;

/**
 * The Description dock's contents: the project's Markdown description
 * (QTextBrowser::setMarkdown), or a note saying how to add one. A
 * project's text is untrusted: nothing is loaded from files or the network
 * (no images, no includes), and only http(s) links open, in the browser.
 * GUI thread only.
 */
class DescriptionView : public QTextBrowser
{
    Q_OBJECT
public:
    explicit DescriptionView(QWidget *parent = nullptr);
    /** The dock's view: wb's project's title and description as they are edited. */
    DescriptionView(Workbench &wb, QWidget *parent = nullptr);

    /** Shows project's description (with its title as a heading when the description has none). */
    void setProject(const Project &project);

    QVariant loadResource(int type, const QUrl &name) override;
};

} // namespace Kp

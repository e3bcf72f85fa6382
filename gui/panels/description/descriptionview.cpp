#include "descriptionview.h"

#include "workbench/projectdocument.h"
#include "workbench/workbench.h"

#include "project/project.h"

#include <QDesktopServices>
#include <QUrl>

namespace Kp {

DescriptionView::DescriptionView(QWidget *parent)
    : QTextBrowser(parent)
{
    setObjectName(QStringLiteral("description"));
    setOpenLinks(false);
    connect(this, &QTextBrowser::anchorClicked, this, [](const QUrl &url) {
        if (url.scheme() == QLatin1String("https") || url.scheme() == QLatin1String("http")) {
            QDesktopServices::openUrl(url);
        }
    });
    setPlaceholderText(tr("No project is open."));
}

void DescriptionView::setProject(const Project &project)
{
    QString md = project.description.trimmed();
    if (md.isEmpty()) {
        md = tr("*This project has no description. Add one as Markdown under \"description\" in its .kpg: a string, "
                "or a list of lines.*");
    }
    if (!project.title.isEmpty() && !md.startsWith(QLatin1Char('#'))) {
        md = QStringLiteral("# %1\n\n%2").arg(project.title, md);
    }
    setMarkdown(md);
}

QVariant DescriptionView::loadResource(int, const QUrl &)
{
    return {}; // images and other resources of an untrusted text are not loaded
}

DescriptionView::DescriptionView(Workbench &wb, QWidget *parent)
    : DescriptionView(parent)
{
    ProjectDocument &doc = wb.document();
    const auto show = [this, &doc] { setProject(doc.project()); };
    connect(&doc, &ProjectDocument::loaded, this, show);
    connect(&doc, &ProjectDocument::projectChanged, this, show);
    if (doc.isOpen()) {
        show(); // built after the project opened (shell/docks.h)
    }
}

} // namespace Kp

#include "targetdialog.h"

#include "client/target.h"
#include "core/format.h"
#include "workbench/devices.h"

#include <QDialogButtonBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

namespace Kp {

namespace {
constexpr int kSpecRole = Qt::UserRole;
}

TargetDialog::TargetDialog(Devices &devices, QWidget *parent, bool adding)
    : QDialog(parent)
    , m_devices(devices)
{
    setObjectName(QStringLiteral("targetDialog"));
    setWindowTitle(adding ? tr("Add Target") : tr("Target"));
    auto *layout = new QVBoxLayout(this);
    auto *intro = new QLabel(tr("Where kernels run. The editor, the compiler and the results stay on this machine; "
                                "only the GPU worker (kpg-worker) runs on the target, started through your own "
                                "ssh or srun."),
                             this);
    intro->setWordWrap(true);
    layout->addWidget(intro);

    m_list = new QListWidget(this);
    m_list->setObjectName(QStringLiteral("targetList"));
    auto *local = new QListWidgetItem(tr("local (this machine)"), m_list);
    local->setData(kSpecRole, QStringLiteral("local"));
    for (const QString &spec : Devices::recentTargets()) {
        auto *item = new QListWidgetItem(spec, m_list);
        item->setData(kSpecRole, spec);
    }
    m_list->setMaximumHeight(m_list->sizeHintForRow(0) * 6 + 2 * m_list->frameWidth());
    layout->addWidget(m_list);

    auto *row = new QHBoxLayout;
    m_url = new QLineEdit(this);
    m_url->setObjectName(QStringLiteral("targetUrl"));
    m_url->setPlaceholderText(tr("ssh://[user@]host[:port][/path/to/kpg-worker] or slurm:partition=gpu,gpus=1"));
    m_url->setClearButtonEnabled(true);
    m_url->setMinimumWidth(m_url->fontMetrics().horizontalAdvance(m_url->placeholderText()) + 24);
    row->addWidget(new QLabel(tr("Target:"), this));
    row->addWidget(m_url, 1);
    m_test = new QPushButton(tr("&Test"), this);
    m_test->setObjectName(QStringLiteral("testTarget"));
    m_test->setToolTip(tr("Ask the target for its GPUs, as kpg devices --target does"));
    row->addWidget(m_test);
    layout->addLayout(row);

    m_result = new QLabel(this);
    m_result->setObjectName(QStringLiteral("targetTestResult"));
    m_result->setWordWrap(true);
    m_result->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_result->setMinimumHeight(m_result->fontMetrics().lineSpacing() * 4);
    m_result->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    layout->addWidget(m_result, 1);

    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    m_use = buttons->button(QDialogButtonBox::Ok);
    m_use->setText(tr("&Use Target"));
    m_use->setObjectName(QStringLiteral("useTarget"));
    layout->addWidget(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, &TargetDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    connect(m_list, &QListWidget::currentItemChanged, this, [this](QListWidgetItem *item) {
        if (item) {
            m_url->setText(item->data(kSpecRole).toString());
        }
    });
    connect(m_url, &QLineEdit::textChanged, this, [this](const QString &text) {
        ++m_testTicket; // an answer about another URL is no answer about this one
        if (m_list->currentItem() && m_list->currentItem()->data(kSpecRole).toString() != text.trimmed()) {
            m_list->setCurrentRow(-1); // the list marks only what the field holds
        }
        m_result->clear();
        m_test->setEnabled(true);
    });
    connect(m_test, &QPushButton::clicked, this, &TargetDialog::test);

    if (adding) {
        m_url->setFocus();
    } else {
        for (int i = 0; i < m_list->count(); ++i) {
            if (m_list->item(i)->data(kSpecRole).toString() == m_devices.target() ||
                (i == 0 && m_devices.target().isEmpty())) {
                m_list->setCurrentRow(i);
            }
        }
    }
}

void TargetDialog::test()
{
    const QString spec = m_url->text().trimmed();
    const quint64 ticket = ++m_testTicket;
    if (const Result<Target> t = Target::parse(spec); !t) {
        m_result->setText(t.error().message);
        Q_EMIT tested();
        return;
    }
    m_test->setEnabled(false);
    m_result->setText(tr("Asking %1 for its GPUs…").arg(spec.isEmpty() ? QStringLiteral("local") : spec));
    const QString host = Devices::hostOf(spec);
    m_devices.probe(spec, this, [this, ticket, host](const Result<DeviceList> &answer, double ms) {
        if (ticket != m_testTicket) {
            return;
        }
        m_test->setEnabled(true);
        const QString took = tr("answered in %1 ms").arg(ms, 0, 'f', 0);
        if (!answer) {
            // The same one message kpg devices --target prints (after "kpg: ").
            m_result->setText(tr("%1\n(%2)").arg(answer.error().message, took));
        } else {
            QStringList lines;
            for (const DeviceInfo &d : answer->devices) {
                lines << tr("%1 · compute %2 · %3 SMs · %4")
                             .arg(Devices::deviceLabel(host, d), d.computeCapability())
                             .arg(d.smCount)
                             .arg(formatBytes(d.totalMemoryBytes));
            }
            lines << tr("CUDA %1 driver; %2").arg(cudaVersionString(answer->driverVersion), took);
            m_result->setText(lines.join(QLatin1Char('\n')));
        }
        Q_EMIT tested();
    });
}

void TargetDialog::accept()
{
    const QString spec = m_url->text().trimmed();
    if (const Status s = m_devices.setTarget(spec.isEmpty() ? QStringLiteral("local") : spec); !s) {
        m_result->setText(s.error().message);
        return; // the dialog stays for a correction
    }
    QDialog::accept();
}

} // namespace Kp

"""Progress of long audits: :mod:`pgc.tasks.progress` (a tqdm bar on a terminal, a dated line every 30 s
elsewhere), under the name the auditor's modules import it by."""

from __future__ import annotations

from pgc.tasks.progress import LINE_INTERVAL_S, LineProgress, NullProgress, progress_bar  # noqa: F401

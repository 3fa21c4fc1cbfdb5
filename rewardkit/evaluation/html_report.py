"""Where `rewardkit.evaluation.html_report` was: its public names, now in
`evaluation.main.html_report` (docs/eval.md names `decode_data` here)."""

from rewardkit.evaluation.main.html_report import (
    PAGE_SIZE,
    decode_data,
    render_html,
    write_html_report,
)

__all__ = ["PAGE_SIZE", "decode_data", "render_html", "write_html_report"]

"""The user guide's first pages run as written: every Python block of each page below, in
order, in one namespace per page (later blocks build on earlier ones), on the device."""

import contextlib
import io
import re
import warnings
from pathlib import Path

import pytest

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = ["getting-started.md", "matrix.md", "linalg.md", "graphs.md"]


def _blocks(page):
    return re.findall(r"```python\n(.*?)```", (DOCS / page).read_text(), re.S)


@pytest.mark.parametrize("page", PAGES)
def test_page_runs_as_written(page, tmp_path, monkeypatch):
    if not (DOCS / page).exists():
        pytest.skip("not a source checkout")
    monkeypatch.chdir(tmp_path)
    ns = {"__name__": "__docs__"}
    for i, block in enumerate(_blocks(page)):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                exec(compile(block, f"{page} block {i + 1}", "exec"), ns)  # noqa: S102
            except Exception as e:  # noqa: BLE001 - name the block that failed
                pytest.fail(f"{page}, block {i + 1} raised {type(e).__name__}: {e}\n{block}")

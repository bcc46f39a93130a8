"""Checking a report the way a reader sees it: headless Chromium (Debian ``chromium``).

:func:`check_page` loads a copy of the page with a small probe script injected first in ``<head>``;
the probe records every error event (script errors, resources that fail to load) and, on load, the
decoded size of every ``<img>``; Chromium's ``--dump-dom`` returns the page with the probe's JSON.
:func:`screenshot` renders the page to a PNG. Nothing is installed here; ``.ci/run`` installs chromium.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--mute-audio",
]

_PROBE = """<script>
window.__probe = {errors: [], images: []};
window.addEventListener('error', function (e) {
  var t = e.target && e.target !== window ? (e.target.tagName || '') + ' ' \
+ String(e.target.src || '').slice(0, 60) : '';
  window.__probe.errors.push(String(e.message || 'resource error') + ' ' + t);
}, true);
window.addEventListener('load', function () {
  var imgs = Array.prototype.slice.call(document.images);
  window.__probe.images = imgs.map(function (i) {
    return {complete: i.complete, width: i.naturalWidth, height: i.naturalHeight, alt: i.alt.slice(0, 80)};
  });
  var pre = document.createElement('pre');
  pre.id = '__probe';
  pre.textContent = JSON.stringify(window.__probe);
  document.body.appendChild(pre);
});
</script>"""

EXTERNAL = re.compile(r"""(?:src|href)\s*=\s*["']?(?!data:|#)([^"'\s>]+)|url\(\s*["']?(?!data:)([^)"']+)""", re.I)


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def external_references(page: str) -> list[str]:
    """Every src/href/url(...) in the page that is not an inline data: URI or a #fragment."""
    return [a or b for a, b in EXTERNAL.findall(page)]


def _run(args: list[str], timeout: float) -> subprocess.CompletedProcess:
    exe = chromium_path()
    if exe is None:
        raise FileNotFoundError("chromium is not installed (Debian: apt-get install -y chromium)")
    with tempfile.TemporaryDirectory(prefix="pgc-chromium-") as profile:
        env = {**os.environ, "HOME": profile}
        return subprocess.run(
            [exe, *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True, text=True, timeout=timeout, env=env
        )


def check_page(html_path: str | Path, timeout: float = 90) -> dict:
    """Load the page in headless Chromium; return {"errors": [...], "images": [{complete, width, height}]}."""
    page = Path(html_path).read_text()
    probed = page.replace("<head>", "<head>" + _PROBE, 1) if "<head>" in page else _PROBE + page
    with tempfile.TemporaryDirectory(prefix="pgc-page-") as tmp:
        probe_file = Path(tmp) / "probe.html"
        probe_file.write_text(probed)
        proc = _run(["--virtual-time-budget=5000", "--dump-dom", probe_file.as_uri()], timeout)
    m = re.search(r'<pre id="__probe">(.*?)</pre>', proc.stdout, re.S)
    if not m:
        raise RuntimeError(f"chromium did not run the probe (exit {proc.returncode}): {proc.stderr[-800:]}")
    import html as _html

    return json.loads(_html.unescape(m.group(1)))


def screenshot(
    html_path: str | Path, png_path: str | Path, width: int = 1200, height: int = 4000, timeout: float = 90
) -> Path:
    png = Path(png_path).resolve()
    png.parent.mkdir(parents=True, exist_ok=True)
    proc = _run(
        [
            f"--window-size={width},{height}",
            f"--screenshot={png}",
            "--virtual-time-budget=3000",
            Path(html_path).resolve().as_uri(),
        ],
        timeout,
    )
    if not png.is_file():
        raise RuntimeError(f"chromium wrote no screenshot (exit {proc.returncode}): {proc.stderr[-800:]}")
    return png


_LAYOUT_PROBE = """<script>
window.addEventListener('load', function () {
  var out = {viewport: [window.innerWidth, window.innerHeight], elements: {}};
  %s.forEach(function (sel) {
    var el = document.querySelector(sel);
    if (!el) { out.elements[sel] = null; return; }
    var r = el.getBoundingClientRect();
    out.elements[sel] = {top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: r.height};
  });
  var pre = document.createElement('pre');
  pre.id = '__layout';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def layout(
    html_path: str | Path, selectors: list[str], width: int = 1300, height: int = 900, timeout: float = 90
) -> dict:
    """Where the elements matching ``selectors`` lie on the first screen of a ``width``×``height``
    window: {"viewport": [w, h], "elements": {selector: {top, bottom, left, right, height} or None}}."""
    page = Path(html_path).read_text()
    probed = page.replace("</body>", _LAYOUT_PROBE % json.dumps(selectors) + "</body>", 1)
    return _probe_result(probed, "layout", width, height, timeout)


def _probe_result(document: str, name: str, width: int, height: int, timeout: float) -> dict:
    """Load ``document`` (holding a probe script that writes JSON into ``<pre id="__NAME">``) in a ``width``×
    ``height`` window and return that JSON."""
    import html as _html

    with tempfile.TemporaryDirectory(prefix="pgc-page-") as tmp:
        probe_file = Path(tmp) / f"{name}.html"
        probe_file.write_text(document)
        proc = _run(
            [f"--window-size={width},{height}", "--virtual-time-budget=5000", "--dump-dom", probe_file.as_uri()],
            timeout,
        )
    m = re.search(rf'<pre id="__{name}">(.*?)</pre>', proc.stdout, re.S)
    if not m:
        raise RuntimeError(f"chromium did not run the {name} probe (exit {proc.returncode}): {proc.stderr[-800:]}")
    return json.loads(_html.unescape(m.group(1)))


def screenshot_section(
    html_path: str | Path,
    png_path: str | Path,
    section_id: str,
    width: int = 1300,
    height: int = 900,
    timeout: float = 90,
) -> Path:
    """A screenshot of the folded section ``section_id`` opened, under the page title (the other
    sections hidden, so the section starts at the top of the window)."""
    page = Path(html_path).read_text()
    sel = json.dumps(section_id)[1:-1]
    style = f"<style>main>*:not(h1):not(#{sel}){{display:none}}</style>"
    opener = f"<script>document.getElementById({json.dumps(section_id)}).open = true;</script>"
    with tempfile.TemporaryDirectory(prefix="pgc-page-") as tmp:
        copy = Path(tmp) / "section.html"
        copy.write_text(page.replace("</head>", style + "</head>", 1).replace("</body>", opener + "</body>", 1))
        return screenshot(copy, png_path, width=width, height=height, timeout=timeout)


_FIT_PROBE = """<script>
window.addEventListener('load', function () {
  function box(el) {
    var r = el.getBoundingClientRect();
    return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, width: r.width, height: r.height};
  }
  function text(el) { return el.textContent.replace(/\\s+/g, ' ').trim().slice(0, 100); }
  var out = {};
  Array.prototype.forEach.call(document.querySelectorAll('iframe[data-width]'), function (frame) {
    var d = frame.contentDocument, root = d.documentElement, at = {};
    at.viewport = [frame.contentWindow.innerWidth, frame.contentWindow.innerHeight];
    at.elements = {};
    %s.forEach(function (sel) {
      var el = d.querySelector(sel);
      at.elements[sel] = el ? box(el) : null;
    });
    Array.prototype.forEach.call(d.querySelectorAll('details'), function (x) { x.open = true; });
    at.page = {scroll_width: root.scrollWidth, client_width: root.clientWidth};
    at.cells = 0;
    at.overflowing_cells = [];
    Array.prototype.forEach.call(d.querySelectorAll('td, th'), function (c) {
      at.cells += 1;
      if (c.scrollWidth > c.clientWidth) {
        at.overflowing_cells.push({text: text(c), scroll_width: c.scrollWidth, client_width: c.clientWidth});
      }
    });
    at.overflowing_tables = [];
    Array.prototype.forEach.call(d.querySelectorAll('table'), function (t) {
      var mine = t.getBoundingClientRect(), room = t.parentElement.getBoundingClientRect();
      if (mine.right > room.right + 0.5 || mine.left < room.left - 0.5) {
        at.overflowing_tables.push({text: text(t.rows[0] || t), right: mine.right, room_right: room.right});
      }
    });
    out[frame.dataset.width] = at;
  });
  var pre = document.createElement('pre');
  pre.id = '__fit';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def fit(html_path: str | Path, widths=(1280, 1920), selectors=(), height: int = 900, timeout: float = 90) -> dict:
    """How the page fits windows ``widths`` pixels wide, measured in one Chromium run (the page in one frame per
    width). Per width (a string key): ``viewport``; ``elements``: where the first element matching each of
    ``selectors`` lies on the first screen ({top, bottom, left, right, width, height} or None); then, with every
    folded section opened, ``page`` (the document's scroll_width and client_width: wider scrolls sideways),
    ``cells`` (how many table cells), ``overflowing_cells`` (cells whose content is wider than the cell: text,
    scroll_width, client_width) and ``overflowing_tables`` (tables wider than the element that holds them)."""
    import html as _html

    page = Path(html_path).read_text()
    frames = "".join(
        f'<iframe data-width="{int(w)}" style="display:block;border:0;width:{int(w)}px;'
        f'height:{int(height)}px" srcdoc="{_html.escape(page, quote=True)}"></iframe>'
        for w in widths
    )
    probe = _FIT_PROBE % json.dumps(list(selectors))
    document = (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'>{probe}</head><body style='margin:0'>{frames}</body></html>"
    )
    return _probe_result(document, "fit", max(widths), int(height), timeout)

"""Golden outputs: what the real CLI prints and writes for one report and one leaderboard on bundled data is
unchanged, byte for byte after a few normalisations, by a refactoring (issue #47).

The inputs need nothing outside the checkout: MapCoder's released ChatGPT HumanEval logs
(``data/published/mapcoder/ChatGPT/HumanEval``, imported with ``sotacheck import mapcoder`` as ``mapcoder-he``,
the run the bundled claims name) and the bundled claims (``data/claims/*.yaml``). The commands run in turn through
the CLI's entry point in one child process, in a fresh folder, with ``$SOTACHECK_*`` unset so that the benchmark
copies shipped with sotacheck are read (the golden files were checked to be what separate ``sotacheck`` processes
give, at two hash seeds). Each output is compared with ``tests/fixtures/golden/NAME``:

=====================  =======================================================================================
golden file            command
=====================  =======================================================================================
import-mapcoder.txt    ``sotacheck import mapcoder .../ChatGPT/HumanEval --out mapcoder-he`` (standard output)
analyze.txt, .json     ``sotacheck analyze mapcoder-he [--json]``
leaderboard.txt        ``sotacheck leaderboard mapcoder-he --html leaderboard.html``
leaderboard.html       that ``--html`` page
leaderboard.json       ``sotacheck leaderboard mapcoder-he --json``
report.txt             ``sotacheck report mapcoder-he --claims data/claims/A.yaml ... --leaderboard humaneval``
report.html            that report's HTML file
=====================  =======================================================================================

Normalised, because it differs from one run or machine to the next (everything else is compared as is):

* the report's ``Generated YYYY-MM-DD HH:MM UTC`` (the clock) and the provenance's ``imported with VERSION``
  (sotacheck's version, which a release changes);
* in each inline SVG figure (matplotlib): ``<dc:date>`` (the clock), ``Matplotlib vX.Y.Z`` (its version),
  and the ids that end in 10 hex digits, which matplotlib salts with a fresh UUID on every save (clip paths,
  markers, path collections, images: ``p73215dc90a``, ``C0_0_954df00769``, ``imagee4003d6ee0``), renamed
  ``p1``, ``C0_0_2``, ``image3``, ... in the order they are defined;
* then each SVG, about two thirds of an HTML file's bytes, is replaced by ``<svg sha256="..." bytes="N"/>``,
  the SHA-256 of its normalised text, which keeps the golden files small while still pinning every byte.

To regenerate after an intended change of output, run
``SOTACHECK_REGENERATE_GOLDEN=1 .venv/bin/pytest -p no:cacheprovider tests/reports/test_golden_outputs.py``:
it rewrites the golden files instead of comparing (each test then skips, naming the file); review the diff.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "fixtures" / "golden"
MAPCODER_HE = REPO / "data" / "published" / "mapcoder" / "ChatGPT" / "HumanEval"
CLAIMS = sorted((REPO / "data" / "claims").glob("*.yaml"))
REGENERATE = "SOTACHECK_REGENERATE_GOLDEN"
REGENERATE_COMMAND = f"{REGENERATE}=1 .venv/bin/pytest -p no:cacheprovider tests/reports/test_golden_outputs.py"
DIFF_LINES = 60

# (golden file, the command's arguments, and for a file a command writes: its name, the command listed above it)
COMMANDS: tuple[tuple[str, tuple[str, ...], str | None], ...] = (
    ("import-mapcoder.txt", ("import", "mapcoder", str(MAPCODER_HE), "--out", "mapcoder-he"), None),
    ("analyze.txt", ("analyze", "mapcoder-he"), None),
    ("analyze.json", ("analyze", "mapcoder-he", "--json"), None),
    ("leaderboard.txt", ("leaderboard", "mapcoder-he", "--html", "leaderboard.html"), None),
    ("leaderboard.html", (), "leaderboard.html"),
    ("leaderboard.json", ("leaderboard", "mapcoder-he", "--json"), None),
    ("report.txt", ("report", "mapcoder-he", *(a for c in CLAIMS for a in ("--claims", str(c))),
                    "--leaderboard", "humaneval", "-o", "report.html"), None),
    ("report.html", (), "report.html"),
)

_REPORT_TIME = re.compile(r"Generated \d{4}-\d\d-\d\d \d\d:\d\d UTC")
_IMPORTED_WITH = re.compile(r"(imported with )\d+(?:\.\d+)+[\w.+-]*")
_SVG = re.compile(r"<svg\b.*?</svg>", re.S)
_SVG_DATE = re.compile(r"<dc:date>[^<]*</dc:date>")
_MATPLOTLIB_VERSION = re.compile(r"Matplotlib v[\w.+-]+,")
_SVG_ID = re.compile(r'\bid="([A-Za-z]\w*?)([0-9a-f]{10})"')


def normalise_svg(svg: str) -> str:
    """One inline SVG with its date, matplotlib's version and its salted ids made stable."""
    svg = _MATPLOTLIB_VERSION.sub("Matplotlib v<VERSION>,", _SVG_DATE.sub("<dc:date><DATE></dc:date>", svg))
    renamed = {m.group(1) + m.group(2): f"{m.group(1)}{n}" for n, m in enumerate(_SVG_ID.finditer(svg), start=1)}
    if not renamed:
        return svg
    return re.sub(r"\b(" + "|".join(renamed) + r")\b", lambda m: renamed[m.group(1)], svg)


def normalise(text: str) -> str:
    """A command's output with the clock, version strings and salted SVG ids made stable, each SVG hashed."""
    text = _IMPORTED_WITH.sub(r"\1<VERSION>", _REPORT_TIME.sub("Generated <TIME> UTC", text))

    def hashed(match: re.Match[str]) -> str:
        svg = normalise_svg(match.group(0)).encode()
        return f'<svg sha256="{hashlib.sha256(svg).hexdigest()}" bytes="{len(svg)}"/>'

    return _SVG.sub(hashed, text)


# One child interpreter (``-P``: tests/sotacheck_command.py) runs the commands in turn through the CLI's entry
# point, each with its standard output (file descriptor 1) sent to a file: pandas, SciPy and matplotlib are
# imported once rather than once a command, about 6 s of CPU instead of 13 s.
_DRIVER = """
import json, os, sys
from sotacheck.cli.main import main
for args, out in json.loads(sys.argv[1]):
    code = 0
    sys.stdout.flush()
    saved = os.dup(1)
    with open(out, "wb") as file:
        os.dup2(file.fileno(), 1)
        try:
            main(args)
        except SystemExit as exc:
            code = exc.code
        finally:
            sys.stdout.flush()
            os.dup2(saved, 1)
            os.close(saved)
    if code:
        sys.exit(f"sotacheck {' '.join(args)}: exit {code}")
"""


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Every golden file's name and today's normalised output, from one run of the commands in a fresh folder."""
    folder = tmp_path_factory.mktemp("golden")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOTACHECK_")}
    plan = [(list(args), name) for name, args, written in COMMANDS if not written]
    done = subprocess.run([sys.executable, "-P", "-c", _DRIVER, json.dumps(plan)], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return {name: normalise((folder / (written or name)).read_bytes().decode()) for name, _, written in COMMANDS}


@pytest.mark.parametrize("name", [name for name, _, _ in COMMANDS])
def test_output_is_unchanged(outputs: dict[str, str], name: str) -> None:
    golden = GOLDEN / name
    if os.environ.get(REGENERATE):
        GOLDEN.mkdir(parents=True, exist_ok=True)
        golden.write_bytes(outputs[name].encode())
        pytest.skip(f"rewrote {golden.relative_to(REPO)} ({REGENERATE} is set)")
    expected = golden.read_bytes().decode()
    if outputs[name] != expected:
        diff = list(difflib.unified_diff(expected.splitlines(keepends=True), outputs[name].splitlines(keepends=True),
                                         f"golden/{name}", f"today's {name}"))
        shown = "".join(diff[:DIFF_LINES]) + (f"... ({len(diff) - DIFF_LINES} more diff lines)\n"
                                               if len(diff) > DIFF_LINES else "")
        pytest.fail(f"{name} differs from its golden file (normalised as the module docstring says):\n{shown}"
                    f"If the change is intended, regenerate the golden files: {REGENERATE_COMMAND}", pytrace=False)


def test_golden_folder_holds_only_these_files() -> None:
    assert sorted(p.name for p in GOLDEN.iterdir()) == sorted(name for name, _, _ in COMMANDS)


def test_normalise_keeps_everything_but_the_clock_versions_and_salted_ids() -> None:
    svg = ('<svg><dc:date>2026-01-02T03:04:05</dc:date><dc:title>Matplotlib v3.11.2, https://matplotlib.org/'
           '</dc:title><clipPath id="pab12cd34ef"/><path id="m0123456789"/><g clip-path="url(#pab12cd34ef)">'
           '<use xlink:href="#m0123456789"/></g><image id="imagee4003d6ee0"/><path id="C0_0_954df00769"/>'
           '<g id="line2d_10"/></svg>')
    assert normalise_svg(svg) == (
        '<svg><dc:date><DATE></dc:date><dc:title>Matplotlib v<VERSION>, https://matplotlib.org/</dc:title>'
        '<clipPath id="p1"/><path id="m2"/><g clip-path="url(#p1)"><use xlink:href="#m2"/></g><image id="image3"/>'
        '<path id="C0_0_4"/><g id="line2d_10"/></svg>')
    page = "<p>Generated 2026-12-04 23:40 UTC</p><td>imported with 0.1.0</td><td>0.1.0</td>"
    assert normalise(page) == "<p>Generated <TIME> UTC</p><td>imported with <VERSION></td><td>0.1.0</td>"

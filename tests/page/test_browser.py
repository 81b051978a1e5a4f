"""The page in a real browser: headless Chromium from the system packages, driven by Selenium.

The page is written by ``write_reports`` from the shipped catalogue and predicates, with a conformance
record made here for ``pi``. Without Chromium and its driver these tests skip with a loud reason; CI
sets ``STOPBENCH_REQUIRE_BROWSER=1`` (``.ci/run``), which turns that into a failure. Screenshots go to
the test's temporary folder, and also to ``$STOPBENCH_SCREENSHOTS`` when it is set (the README's
pictures: ``STOPBENCH_SCREENSHOTS=docs/img``).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.catalogue.load import load_catalogue
from bench.engine.discovery import discover
from bench.golden.expected import load_golden, path_of
from bench.golden.run import Result, run
from bench.report.labels import label
from bench.report.write import write_reports
from tests.helpers import ROOT

REQUIRE_ENV = "STOPBENCH_REQUIRE_BROWSER"
CHROMIUM_FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage", "--window-size=1500,1000"]
KNOWN = ("seed000-tool-tool-answer", "pi")
"""A cell whose steps and rule citation are typed in below from predicates/pi.py: two tool rounds
(rule ``tool-calls``, agent-loop.ts L202-216 at 31b513e3), then ``done``."""
KNOWN_LINK = "https://github.com/earendil-works/pi/blob/31b513e3/packages/agent/src/agent-loop.ts#L202-L216"


def find_browser() -> tuple[str, str] | None:
    """Chromium and chromedriver: from $STOPBENCH_CHROMIUM / $STOPBENCH_CHROMEDRIVER, else the PATH."""
    browser = os.environ.get("STOPBENCH_CHROMIUM") or next(
        (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
    driver = os.environ.get("STOPBENCH_CHROMEDRIVER") or shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


def no_browser(why: str) -> None:
    message = (f"NO BROWSER, THE PAGE WAS NOT TESTED IN ONE: {why}. Install Debian's chromium and "
               "chromium-driver (apt-get install -y chromium chromium-driver) and pip's selenium.")
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{message} ({REQUIRE_ENV}=1 makes this a failure)")
    warnings.warn(message, stacklevel=2)
    pytest.skip(message)


@pytest.fixture(scope="module")
def shipped() -> dict[str, Any]:
    cat = load_catalogue(ROOT / "sequences")
    preds = discover(ROOT / "predicates", entry_points_too=False)
    golden = load_golden(ROOT / "expected")
    results = list(run(cat.sequences, preds, golden))
    return {"catalogue": cat.sequences, "predicates": preds, "results": results, "golden": golden}


@pytest.fixture(scope="module")
def page(shipped: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``index.html`` as ``write_reports`` writes it, beside a conformance record for ``pi``: the
    original agrees on seed000-talk-only (a row written before records kept steps) and differs on
    seed000-tool-call-with-text, where it stopped on the first turn (its steps recorded)."""
    folder = tmp_path_factory.mktemp("reports")
    by_key: dict[tuple[str, str], Result] = {(r.cell.sequence, r.cell.predicate): r for r in shipped["results"]}
    same = label(by_key[("seed000-talk-only", "pi")].cell)
    port = label(by_key[("seed000-tool-call-with-text", "pi")].cell)
    record = {"version": 1, "driver": "pi", "port": "pi", "install": "npm install pi@test",
              "sequences": {"seed000-talk-only": {"port": same, "original": same},
                            "seed000-tool-call-with-text": {
                                "port": port, "original": "stop:stop@1 ok []",
                                "original_steps": [{"turn": 0, "action": "stop", "run": [], "failed": [],
                                                    "reason": "stop", "ok": True}],
                                "difference": "step 2: the original had stopped"}}}
    (folder / "conformance").mkdir()
    (folder / "conformance" / "pi.json").write_text(json.dumps(record), encoding="utf-8")
    written = write_reports(folder, shipped["results"], [s.id for s in shipped["catalogue"]],
                            [p.name for p in shipped["predicates"]], catalogue=shipped["catalogue"],
                            loaded=shipped["predicates"], golden=shipped["golden"])
    assert folder / "index.html" in written
    return folder / "index.html"


@pytest.fixture(scope="module")
def browser() -> tuple[str, str]:
    """Chromium's and chromedriver's paths; skips (or fails, in CI) loudly when there are none."""
    found = find_browser()
    if found is None:
        no_browser("no chromium and chromedriver on the PATH")
    try:
        import selenium  # noqa: F401
    except ImportError:
        no_browser("the selenium package is not installed")
    assert found is not None
    return found


@pytest.fixture(scope="module")
def driver(browser: tuple[str, str], page: Path) -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    found = browser
    profile = tempfile.mkdtemp(prefix="stopbench-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = found[0]
    for flag in [*CHROMIUM_FLAGS, f"--user-data-dir={profile}"]:
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    drv = webdriver.Chrome(service=Service(found[1]), options=opts)
    try:
        drv.get(page.as_uri())
        yield drv
    finally:
        drv.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def fresh(driver: Any, page: Path) -> Any:
    """The page reloaded: no filter set, no drill-down open."""
    driver.get(page.as_uri())
    return driver


def errors(driver: Any) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]


def screenshot(driver: Any, name: str, tmp_path: Path) -> None:
    driver.save_screenshot(str(tmp_path / name))
    target = os.environ.get("STOPBENCH_SCREENSHOTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(Path(target) / name))


def by(kind: str) -> Any:
    from selenium.webdriver.common.by import By

    return getattr(By, kind)


def visible_rows(driver: Any) -> list[str]:
    """The sequence ids of the matrix rows the browser lays out (display is not none), in order."""
    rows: list[str] = driver.execute_script(
        "return Array.from(document.querySelectorAll('tr.seqrow'))"
        ".filter((tr) => tr.getClientRects().length > 0).map((tr) => tr.dataset.seq);")
    return rows


def test_the_page_loads_without_a_console_error_and_shows_every_sequence_and_predicate(
        fresh: Any, shipped: dict[str, Any], tmp_path: Path) -> None:
    assert errors(fresh) == []
    assert sorted(visible_rows(fresh)) == sorted(s.id for s in shipped["catalogue"])
    heads = [th.get_attribute("data-pred") for th in fresh.find_elements(by("CSS_SELECTOR"), "th.predcol")]
    assert heads == [p.name for p in shipped["predicates"]]
    cells = fresh.find_elements(by("CSS_SELECTOR"), "td.cell")
    assert len(cells) == len(shipped["catalogue"]) * len(shipped["predicates"])
    golden = shipped["golden"]
    reviewed = [(r.cell, golden.expectation(r.cell.predicate, r.cell.sequence)) for r in shipped["results"]]
    reviewed = [(c, e) for c, e in reviewed if e is not None]
    same = sum(path_of(c) == list(e.path) for c, e in reviewed)
    assert fresh.find_element(by("ID"), "live-check").text == (
        f"Checked in this browser: {len(cells)} cells drawn as their verdicts; {same} of {len(reviewed)} reviewed "
        "cells follow the decision path expected/ gives them.")
    screenshot(fresh, "matrix.png", tmp_path)


def test_clicking_a_known_cell_opens_its_drill_down_with_rule_ids_and_citation_link(
        fresh: Any, shipped: dict[str, Any], tmp_path: Path) -> None:
    seq, pred = KNOWN
    fresh.find_element(by("ID"), f"cell-{seq}--{pred}").click()
    drill = fresh.find_element(by("ID"), "drill")
    assert drill.is_displayed()
    assert fresh.find_element(by("ID"), "drill-title").text == f"{seq} × {pred}"
    steps = fresh.find_elements(by("CSS_SELECTOR"), "#drill-steps tbody tr")
    assert [tr.find_element(by("CSS_SELECTOR"), "code.rule-id").text for tr in steps] == \
        ["tool-calls", "tool-calls", "done"]
    rules = {li.get_attribute("data-rule"): li for li in fresh.find_elements(by("CSS_SELECTOR"), "#drill-rules > li")}
    assert sorted(rules) == ["done", "tool-calls"]
    links = [a.get_attribute("href") for a in rules["tool-calls"].find_elements(by("CSS_SELECTOR"), "a.cite")]
    assert KNOWN_LINK in links
    assert "tool, tool, answer" in fresh.find_element(by("ID"), "drill-seq-title").text
    assert len(fresh.find_elements(by("CSS_SELECTOR"), "#drill-turns tbody tr")) == 3
    basis = shipped["golden"].expectation(pred, seq).basis  # the input the page shows, read from expected/pi.yaml
    assert fresh.find_element(by("ID"), "drill-basis").text.startswith(f"basis: {basis} (")
    screenshot(fresh, "drilldown.png", tmp_path)
    assert errors(fresh) == []


def test_only_violations_hides_the_rows_with_no_violating_cell(fresh: Any, shipped: dict[str, Any]) -> None:
    violating = {r.cell.sequence for r in shipped["results"] if r.cell.violations}
    assert 0 < len(violating) < len(shipped["catalogue"])
    fresh.find_element(by("ID"), "f-viol").click()
    assert sorted(visible_rows(fresh)) == sorted(violating)
    assert fresh.find_element(by("ID"), "f-count").text == f"{len(violating)} of {len(shipped['catalogue'])} sequences"
    fresh.find_element(by("ID"), "f-viol").click()
    verdicts: dict[str, set[tuple[str, bool | None]]] = {}
    for r in shipped["results"]:
        verdicts.setdefault(r.cell.sequence, set()).add((r.cell.outcome, r.cell.ok))
    fresh.find_element(by("ID"), "f-disagree").click()
    assert sorted(visible_rows(fresh)) == sorted(s for s, v in verdicts.items() if len(v) > 1)
    fresh.find_element(by("ID"), "f-disagree").click()
    fresh.find_element(by("ID"), "f-text").send_keys("seed000-tool")
    assert sorted(visible_rows(fresh)) == ["seed000-tool-call-with-text", "seed000-tool-tool-answer"]
    assert errors(fresh) == []


def test_the_stepper_moves_forward_and_back_across_every_loop(fresh: Any, shipped: dict[str, Any]) -> None:
    from selenium.webdriver.support.ui import Select

    seq = "seed000-tool-tool-answer"
    longest = max(r.cell.n_steps for r in shipped["results"] if r.cell.sequence == seq)
    Select(fresh.find_element(by("ID"), "st-seq")).select_by_value(seq)
    pos = fresh.find_element(by("ID"), "st-pos")
    assert pos.text == f"step 1 of {longest}"

    def pi_row() -> list[str]:
        row = fresh.find_element(by("CSS_SELECTOR"), '#st-table tr[data-pred="pi"]')
        return [td.text for td in row.find_elements(by("TAG_NAME"), "td")][1:3]

    assert pi_row() == ["continue", "tool-calls"]
    fresh.find_element(by("ID"), "st-fwd").click()
    fresh.find_element(by("ID"), "st-fwd").click()
    assert pos.text == f"step 3 of {longest}"
    assert pi_row() == ["stop", "done"]
    fresh.find_element(by("ID"), "st-back").click()
    assert pos.text == f"step 2 of {longest}"
    rows = fresh.find_elements(by("CSS_SELECTOR"), "#st-table tbody tr")
    assert len(rows) == len(shipped["predicates"])
    assert errors(fresh) == []


def test_the_conformance_marker_shows_for_a_port_with_a_record(fresh: Any) -> None:
    def mark(seq: str, pred: str) -> str | None:
        found = fresh.find_element(by("ID"), f"cell-{seq}--{pred}").find_elements(by("CSS_SELECTOR"), ".mk-conf")
        return found[0].text if found else None

    assert mark("seed000-talk-only", "pi") == "o="
    assert mark("seed000-tool-call-with-text", "pi") == "o≠"
    assert mark("seed000-tool-tool-answer", "pi") == "o–"  # the record does not cover it: not run
    assert mark("seed000-talk-only", "reference") is None  # no record for the reference loop
    td = fresh.find_element(by("ID"), "cell-seed000-tool-call-with-text--pi")  # placed and titled by the script
    assert (td.get_attribute("data-seq"), td.get_attribute("data-pred")) == ("seed000-tool-call-with-text", "pi")
    assert td.get_attribute("title").endswith(" — original loop: differs")
    fresh.find_element(by("ID"), "cell-seed000-tool-call-with-text--pi").click()
    text = fresh.find_element(by("ID"), "drill-conformance").text
    assert "differs" in text and "stop:stop@1 ok []" in text and "step 2: the original had stopped" in text
    rows = fresh.find_elements(by("CSS_SELECTOR"), "#drill-conf-steps tbody tr")
    # pi runs the call, then answers; the original stopped at once: they differ at step 1
    cells = [[td.text for td in tr.find_elements(by("CSS_SELECTOR"), "td")] for tr in rows]
    assert [c[:3] for c in cells] == [["1 ≠ first difference", "0", "continue tool-calls"], ["2", "1", "stop done"]]
    assert cells[0][4:6] == ["0", "stop (stop, ok=true)"] and cells[1][4] == "(no request)"
    marked = fresh.find_elements(by("CSS_SELECTOR"), "#drill-conf-steps tr.firstdiff")
    assert [tr.get_attribute("data-first-diff") for tr in marked] == ["true"]
    fresh.find_element(by("ID"), "drill-close").click()
    fresh.find_element(by("ID"), "cell-seed000-talk-only--pi").click()
    assert fresh.find_element(by("ID"), "drill-conf-steps").text.startswith("Steps not recorded")
    assert errors(fresh) == []


def test_a_link_to_a_cell_opens_its_drill_down(driver: Any, page: Path) -> None:
    seq, pred = KNOWN
    driver.get(page.as_uri() + f"#cell-{seq}--{pred}")
    assert driver.find_element(by("ID"), "drill").is_displayed()
    assert driver.find_element(by("ID"), "drill-title").text == f"{seq} × {pred}"
    assert errors(driver) == []


def test_the_keyboard_moves_between_cells_and_opens_and_closes_the_drill_down(fresh: Any) -> None:
    from selenium.webdriver.common.keys import Keys

    first = fresh.find_element(by("CSS_SELECTOR"), "td.cell")
    first.click()
    fresh.find_element(by("ID"), "drill").send_keys(Keys.ESCAPE)
    assert not fresh.find_element(by("ID"), "drill").is_displayed()
    active = fresh.switch_to.active_element
    assert active.get_attribute("id") == first.get_attribute("id")
    active.send_keys(Keys.ARROW_RIGHT)
    active = fresh.switch_to.active_element
    second_pred = fresh.find_elements(by("CSS_SELECTOR"), "th.predcol")[1].get_attribute("data-pred")
    assert active.get_attribute("data-pred") == second_pred
    active.send_keys(Keys.ARROW_DOWN)
    active = fresh.switch_to.active_element
    assert active.get_attribute("data-seq") == visible_rows(fresh)[1]
    active.send_keys(Keys.ENTER)
    assert fresh.find_element(by("ID"), "drill").is_displayed()
    assert fresh.find_element(by("ID"), "drill-title").text == f"{visible_rows(fresh)[1]} × {second_pred}"
    assert errors(fresh) == []


def test_a_loops_name_opens_its_rules_and_a_sequence_opens_the_stepper(fresh: Any, shipped: dict[str, Any]) -> None:
    pi = next(p for p in shipped["predicates"] if p.name == "pi")
    fresh.find_element(by("CSS_SELECTOR"), 'th.predcol[data-pred="pi"]').click()
    assert fresh.find_element(by("ID"), "drill-title").text == "pi"
    shown = [li.get_attribute("data-rule") for li in fresh.find_elements(by("CSS_SELECTOR"), "#loop-rules > li")]
    assert shown == list(pi.rules)
    rule = '#loop-rules > li[data-rule="tool-calls"] a'
    links = [a.get_attribute("href") for a in fresh.find_elements(by("CSS_SELECTOR"), rule)]
    assert links == [KNOWN_LINK, KNOWN_LINK.replace("#L202-L216", "#L411-L426")]  # agent-loop.ts:L202-216 with L411-426
    fresh.find_element(by("ID"), "drill-close").click()
    fresh.find_element(by("CSS_SELECTOR"), "#row-seed000-talk-only > th").click()
    assert fresh.find_element(by("ID"), "st-seq").get_attribute("value") == "seed000-talk-only"
    assert fresh.find_element(by("ID"), "st-pos").text.startswith("step 1 of ")
    assert errors(fresh) == []


def test_a_live_column_shows_marked_live_and_its_drill_down_says_it_has_no_golden_file(
        driver: Any, shipped: dict[str, Any], tmp_path: Path) -> None:
    from bench.check.report import write_live
    from bench.check.runner import LiveRun
    from bench.engine.model import Cell, Decision, Step
    from bench.report.live import live_columns

    # a live program that stops at once on the tool round of seed000-tool-call-with-text (drops its call)
    seq = next(s for s in shipped["catalogue"] if s.id == "seed000-tool-call-with-text")
    cell = Cell(seq.id, "mine@live", "stopped", (Step(1, 0, Decision("stop", "observed", reason="exit 0", ok=True)),),
                reason="exit 0", ok=True)
    write_live(tmp_path, "mine", ["mine"], [LiveRun(seq, cell, None, 0, (), 0.0)])
    live = live_columns(tmp_path, shipped["catalogue"])
    write_reports(tmp_path, shipped["results"] + live.results, [s.id for s in shipped["catalogue"]],
                  [p.name for p in shipped["predicates"]] + live.columns, catalogue=shipped["catalogue"],
                  loaded=shipped["predicates"], golden=shipped["golden"])
    driver.get((tmp_path / "index.html").as_uri())
    head = driver.find_element(by("CSS_SELECTOR"), 'th.predcol[data-pred="mine@live"]')
    assert "livecol" in head.get_attribute("class") and "◉" in head.text
    td = driver.find_element(by("ID"), "cell-seed000-tool-call-with-text--mine@live")
    assert td.get_attribute("data-golden") == "live" and td.find_elements(by("CSS_SELECTOR"), ".mk-viol")
    td.click()
    assert driver.find_element(by("ID"), "drill-live").text.startswith("None: observed live.")
    assert "no_dropped_calls" in driver.find_element(by("ID"), "drill-violations").text
    assert errors(driver) == []
    screenshot(driver, "live-drilldown.png", tmp_path)


def test_a_reactive_sequence_steps_through_the_turns_each_loop_was_served_and_shows_request_changes(
        fresh: Any) -> None:
    from selenium.webdriver.support.ui import Select

    Select(fresh.find_element(by("ID"), "st-seq")).select_by_value("chat-dropped-calls-x3-remind-recovers")
    for _ in range(7):
        fresh.find_element(by("ID"), "st-fwd").click()
    assert fresh.find_element(by("ID"), "st-pos").text.startswith("step 8 of ")
    boxes = fresh.find_elements(by("CSS_SELECTOR"), "#st-body .turnbox")
    served = {b.get_attribute("data-turn"): b.text for b in boxes}
    # the loops that reminded at step 7 were served turn 9 (the call), the ones that resent turn 7
    assert set(served) == {"7", "9"}
    assert "reference" in served["9"] and "opencode" in served["7"]
    fresh.execute_script("location.hash = '#cell-chat-context-overflow-compacted--opencode';")
    steps = fresh.find_element(by("ID"), "drill-steps").text
    assert "remind (reminder) +compact" in steps
    assert errors(fresh) == []

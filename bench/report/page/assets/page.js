// stopbench page: filters, keyboard navigation, the drill-down and the stepper, over the data
// embedded in #stopbench-data. No framework, nothing fetched; every text goes in through textContent.
(function () {
  "use strict";

  const DATA = JSON.parse(document.getElementById("stopbench-data").textContent);
  (function unshare(T) {  // each repeated fact is embedded once (bench/report/page/data.py by_reference)
    const shared = new Set(DATA.shared);
    for (const k of T.conformance) if (k.original_steps) k.original_steps = k.original_steps.map((i) => T.recorded_steps[i]);
    const cells = {};
    for (const [seq, row] of Object.entries(DATA.cells)) {
      for (const [pred, values] of Object.entries(row)) {
        const c = {};
        T.shapes[values[0]].forEach((f, i) => {
          const v = values[i + 1];
          c[f] = f === "steps" ? v.map((s) => T.steps[s]) : shared.has(f) ? T[f][v] : v;
        });
        cells[seq + "\t" + pred] = c;
      }
    }
    DATA.cells = cells;
  })(DATA.tables);
  const SEQS = new Map(DATA.sequences.map((s) => [s.id, s]));
  for (const s of DATA.sequences) {  // a long sequence's drawn turns, at their indices (the rest are holes)
    if (s.more_turns) for (const k of Object.keys(s.more_turns)) s.turns[Number(k)] = s.more_turns[k];
    if (s.n_turns) s.turns.length = s.n_turns;
  }
  const PREDS = new Map(DATA.predicates.map((p) => [p.name, p]));
  const PRED_NAMES = DATA.predicates.map((p) => p.name);
  const GLYPH = DATA.verdicts.glyphs;  // bench/report/labels.py: the verdicts' glyphs and words, once
  const WORDS = DATA.verdicts.words;

  function cellOf(seq, pred) { return DATA.cells[seq + "\t" + pred] || null; }

  function cellTitle(c) {  // a cell's tooltip: its label, then what its marks say
    return c.label + (c.violations.length ? " — " + c.violations.length + " violation(s)" : "")
      + (c.golden === "match" ? "" : c.golden === "live" ? " — observed live, no golden file" : " — golden " + c.golden)
      + (c.conformance ? " — original loop: " + c.conformance.status : "");
  }

  (function placeCells() {  // each cell's sequence and column come from its row and its column head
    const heads = Array.from(document.querySelectorAll("#matrix thead th.predcol"), (th) => th.dataset.pred);
    for (const tr of document.querySelectorAll("#matrix tr.seqrow")) {
      tr.querySelectorAll("td.cell").forEach((td, i) => {
        td.dataset.seq = tr.dataset.seq;
        td.dataset.pred = heads[i];
        const c = cellOf(tr.dataset.seq, heads[i]);
        if (c) td.title = cellTitle(c);
      });
    }
  })();

  // h("tag.class", {attr: value}, child, ...): an element; strings become text nodes.
  function h(spec, attrs) {
    const [tag, ...classes] = spec.split(".");
    const el = document.createElement(tag);
    if (classes.length) el.className = classes.join(" ");
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      el.setAttribute(k, v === true ? "" : String(v));
    }
    for (let i = 2; i < arguments.length; i++) append(el, arguments[i]);
    return el;
  }
  function append(el, child) {
    if (child === null || child === undefined || child === false) return;
    if (Array.isArray(child)) { child.forEach((c) => append(el, c)); return; }
    el.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
  }
  function link(l) { return h("a", { href: l.url, target: "_blank", rel: "noopener noreferrer", class: "cite" }, l.text); }
  function show(v) { return v === null || v === undefined ? "—" : typeof v === "boolean" ? String(v) : v; }
  function table(headers, rows) {
    return h("table", {}, h("thead", {}, h("tr", {}, headers.map((x) => h("th", { scope: "col" }, x)))),
      h("tbody", {}, rows.map((r) => h("tr", {}, r.map((x) => h("td", {}, x))))));
  }

  // ------------------------------------------------------------------ filters
  const rows = Array.from(document.querySelectorAll("tr.seqrow"));
  const headerRows = Array.from(document.querySelectorAll("tr.grouprow, tr.tagrow"));
  const f = {
    dialect: document.getElementById("f-dialect"), group: document.getElementById("f-group"),
    tag: document.getElementById("f-tag"), viol: document.getElementById("f-viol"),
    mism: document.getElementById("f-mism"), disagree: document.getElementById("f-disagree"),
    text: document.getElementById("f-text"), count: document.getElementById("f-count"),
  };

  function rowVisible(tr) {
    const d = tr.dataset;
    if (f.dialect.value && d.dialect !== f.dialect.value) return false;
    if (f.group.value && d.group !== f.group.value) return false;
    if (f.tag.value && d.tags.split(" ").indexOf(f.tag.value) < 0) return false;
    if (f.viol.checked && !tr.querySelector("td.has-viol")) return false;
    if (f.mism.checked && !tr.querySelector("td.is-mism")) return false;
    if (f.disagree.checked && d.disagree !== "true") return false;
    const q = f.text.value.trim().toLowerCase();
    if (q && d.search.indexOf(q) < 0) return false;
    return true;
  }

  function applyFilters() {
    let n = 0;
    const visibleGroups = new Set();
    const visibleTags = new Set();
    for (const tr of rows) {
      const vis = rowVisible(tr);
      tr.classList.toggle("hidden", !vis);
      if (vis) {
        n++;
        visibleGroups.add(tr.dataset.group);
        // a row sits under the tag header of its first tag
        const first = tr.dataset.tags ? tr.dataset.tags.split(" ")[0] : "(no tag)";
        visibleTags.add(tr.dataset.group + "\t" + first);
      }
    }
    for (const tr of headerRows) {
      const key = tr.classList.contains("grouprow") ? visibleGroups.has(tr.dataset.group)
        : visibleTags.has(tr.dataset.group + "\t" + tr.dataset.tag);
      tr.classList.toggle("hidden", !key);
    }
    f.count.textContent = n + " of " + rows.length + " sequences";
  }
  for (const el of [f.dialect, f.group, f.tag, f.viol, f.mism, f.disagree]) el.addEventListener("change", applyFilters);
  f.text.addEventListener("input", applyFilters);

  // ------------------------------------------------------------------ keyboard navigation
  let current = document.querySelector("td.cell[tabindex]");
  if (current) current.tabIndex = 0;

  function focusCell(td) {
    if (!td) return;
    if (current && current !== td) current.tabIndex = -1;
    current = td;
    td.tabIndex = 0;
    td.focus();
  }
  function visibleRows() { return rows.filter((tr) => !tr.classList.contains("hidden")); }
  function move(td, dr, dc) {
    const tr = td.parentElement;
    const vis = visibleRows();
    const cells = Array.from(tr.querySelectorAll("td.cell"));
    let col = cells.indexOf(td);
    let ri = vis.indexOf(tr);
    if (dc) col = Math.max(0, Math.min(cells.length - 1, col + dc));
    if (dr) ri = Math.max(0, Math.min(vis.length - 1, ri + dr));
    const target = vis[ri] && vis[ri].querySelectorAll("td.cell")[col];
    focusCell(target);
  }

  document.getElementById("matrix").addEventListener("keydown", (ev) => {
    const td = ev.target.closest("td.cell");
    if (!td) return;
    const keys = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
    if (keys[ev.key]) { ev.preventDefault(); move(td, keys[ev.key][0], keys[ev.key][1]); }
    else if (ev.key === "Home") { ev.preventDefault(); focusCell(td.parentElement.querySelector("td.cell")); }
    else if (ev.key === "End") { ev.preventDefault(); const all = td.parentElement.querySelectorAll("td.cell"); focusCell(all[all.length - 1]); }
    else if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); openDrill(td); }
  });
  document.getElementById("matrix").addEventListener("click", (ev) => {
    const td = ev.target.closest("td.cell");
    if (td && !td.classList.contains("empty")) { focusCell(td); openDrill(td); return; }
    const head = ev.target.closest("th.predcol");
    if (head) { openLoop(head.dataset.pred); return; }
    const rowHead = ev.target.closest("tr.seqrow > th");
    if (rowHead) { setStepper(rowHead.parentElement.dataset.seq, 1); document.getElementById("stepper").scrollIntoView(); }
  });
  document.addEventListener("keydown", (ev) => {
    const typing = ev.target.matches && ev.target.matches("input, select, textarea");
    if (ev.key === "Escape" && !drill.hidden) { ev.preventDefault(); closeDrill(); return; }
    if (typing) return;
    if (ev.key === "/") { ev.preventDefault(); f.text.focus(); }
    else if (ev.key === "[") { ev.preventDefault(); step(-1); }
    else if (ev.key === "]") { ev.preventDefault(); step(1); }
  });

  // ------------------------------------------------------------------ drill-down
  const drill = document.getElementById("drill");
  const drillBody = document.getElementById("drill-body");
  const drillTitle = document.getElementById("drill-title");
  let openTd = null;

  // the open cell is named in the address (#cell-<sequence>--<loop>), so a link opens it again
  function setHash(h) {
    try { history.replaceState(null, "", h || location.pathname + location.search); } catch (e) { /* some browsers refuse on file: */ }
  }

  function closeDrill() {
    drill.hidden = true;
    setHash("");
    if (openTd) { openTd.classList.remove("selected"); focusCell(openTd); }
    openTd = null;
  }
  document.getElementById("drill-close").addEventListener("click", closeDrill);

  function ruleOf(pred, id) {
    const p = PREDS.get(pred);
    return p ? p.rules.find((r) => r.id === id) || null : null;
  }

  // a reactive turn's `after`: which turn answers each kind of follow-up
  function afterText(after) { return Object.keys(after).map((a) => a + " → turn " + after[a]).join(", "); }
  // a step's decision with the request changes it makes (st[7], e.g. "+max_tokens=8192")
  function decisionText(st) { return st[7] ? st[1] + " " + st[7] : st[1]; }

  function turnBlock(t, i) {
    const calls = t.calls.length ? h("ul", {}, t.calls.map((c) => h("li", {}, h("code", {}, c.name), " ",
      h("span.mono", {}, c.args), " ", h("small", {}, "id " + JSON.stringify(c.id))))) : "no tool calls";
    return h("tr", { "data-turn": i },
      h("td", {}, String(i)),
      h("td", {}, h("b", {}, t.finish), h("br"), h("span.mono", {}, t.raw === null ? "(none sent)" : JSON.stringify(t.raw)),
        t.detail ? [h("br"), "detail: ", t.detail] : null, t.end_turn !== undefined ? [h("br"), "end_turn: " + t.end_turn] : null),
      h("td", {}, t.content === null ? h("i", {}, "null") : t.content === "" ? h("i", {}, "\"\" (empty)") : h("pre", {}, t.content),
        t.reasoning !== undefined ? [h("small", {}, "reasoning:"), t.reasoning === null ? " null" : h("pre", {}, t.reasoning)] : null),
      h("td", {}, calls),
      h("td", {}, t.error ? [h("b", {}, t.error.kind), t.error.code ? " " + t.error.code : "", t.error.status !== null ? " (" + t.error.status + ")" : "", h("br"), t.error.message] : "",
        t.steer ? [h("br"), h("small", {}, "steer: "), t.steer] : null,
        t.after ? [h("br"), h("small", {}, "after: "), h("span.mono", {}, afterText(t.after))] : null,
        t.usage ? [h("br"), h("small", {}, "usage in/out: " + t.usage[0] + "/" + t.usage[1])] : null));
  }

  // what a loop declares: description, pinned source, cap, and (with allRules) every rule and its links
  function loopCard(p, allRules) {
    const card = h("div.loopcard", {},
      h("p", {}, h("b", {}, p.name), " — " + (p.broken ? "did not load: " + p.broken : p.description)),
      h("p.ruletext", {}, "source: " + p.source + (p.live ? " · its own cap, if any, is not known to the bench (the safety cap ends it)" : p.max_steps !== null ? " · cap " + p.max_steps + " requests"
        + (p.cap ? " (then stop " + p.cap.reason + ", ok=" + p.cap.ok + ")" : "") : " · no cap of its own")
        + (p.cap_note ? " · " + p.cap_note : "")),
      p.links.length ? h("ul.cites", {}, p.links.map((l) => h("li", {}, link(l)))) : null,
      p.conformance ? h("p", {}, "original loop driven by ", h("code", {}, p.conformance.driver), ": ", h("span.mono", {}, p.conformance.install)) : null);
    if (allRules) {
      append(card, h("h3", {}, p.rules.length + " rules"));
      append(card, h("ul", { id: "loop-rules" }, p.rules.map((r) => h("li", { "data-rule": r.id }, h("code.rule-id", {}, r.id),
        h("div.ruletext", {}, r.text), r.links.length ? h("ul.cites", {}, r.links.map((l) => h("li", {}, link(l)))) : null))));
    }
    return card;
  }

  function openLoop(name) {
    const p = PREDS.get(name);
    if (!p) return;
    if (openTd) openTd.classList.remove("selected");
    openTd = null;
    drillTitle.textContent = name;
    drillBody.replaceChildren(loopCard(p, true));
    drill.hidden = false;
    drill.scrollTop = 0;
    drill.focus();
  }

  // a cell's decision path, a run of identical steps written once with its count (as in expected/)
  function pathOf(c) {
    const out = [];
    for (const st of c.steps) {
      const key = st[1] + " " + st[2] + (st[7] ? " " + st[7] : "");
      const last = out[out.length - 1];
      if (last && last.key === key) last.n++;
      else out.push({ key: key, n: 1 });
    }
    const path = out.map((x) => x.n > 1 ? x.key + " x" + x.n : x.key);
    if (c.elided) path.push("… " + c.elided + " more step(s), not drawn");
    return path;
  }

  // the port's steps now beside the original's recorded ones, the first differing step marked
  function confSteps(c, k, pred) {
    if (!k.original_steps) {
      return h("p", { id: "drill-conf-steps" }, "Steps not recorded: this record was written before records kept the original's steps (run stopbench conform again); the port's steps are above.");
    }
    const orig = k.original_steps, n = Math.max(c.steps.length, orig.length);
    const tools = (run, failed) => (run.length ? "run " + run.join(", ") : "") + (failed.length ? (run.length ? "; " : "") + "failed " + failed.join(", ") : "");
    const port = (st, i) => st ? [h("td", {}, String(st[0])), h("td", {}, decisionText(st) + " ", h("code.rule-id", {}, st[2])), h("td", {}, tools(st[5], st[6]))]
      : [h("td", { colspan: 3 }, i < c.n ? "(not drawn)" : "(no request)")];
    const original = (o) => o ? [h("td", {}, String(o.turn)), h("td", {}, o.action + (o.changes ? " " + o.changes : "") + (o.action === "stop" ? " (" + show(o.reason) + ", ok=" + show(o.ok) + ")" : "")), h("td", {}, tools(o.run, o.failed))]
      : [h("td", { colspan: 3 }, "(no request)")];
    const body = [];
    for (let i = 0; i < n; i++) {
      const first = i === k.first_step;
      body.push(h("tr" + (first ? ".firstdiff" : ""), first ? { "data-first-diff": "true" } : {},
        h("td", {}, String(i + 1), first ? h("b.diffmark", {}, " ≠ first difference") : null), port(c.steps[i], i), original(orig[i])));
    }
    return h("div", { id: "drill-conf-steps" },
      h("p", {}, k.first_step === null ? "The port's steps and the original's agree (turn, action, tools run and failed; the final stop by turn and action)."
        : "The steps first differ at step " + (k.first_step + 1) + " (marked ≠)."),
      h("table", {}, h("thead", {},
        h("tr", {}, h("th", { scope: "col", rowspan: 2 }, "step"), h("th", { scope: "colgroup", colspan: 3 }, pred + ", the port now"), h("th", { scope: "colgroup", colspan: 3 }, pred + "@original, as recorded")),
        h("tr", {}, ["turn", "decision, rule", "tools", "turn", "action", "tools"].map((x) => h("th", { scope: "col" }, x)))),
        h("tbody", {}, body)));
  }

  function openDrill(td) {
    const seqId = td.dataset.seq, pred = td.dataset.pred;
    const c = cellOf(seqId, pred), s = SEQS.get(seqId), p = PREDS.get(pred);
    if (!c || !s || !p) return;
    if (openTd) openTd.classList.remove("selected");
    openTd = td;
    td.classList.add("selected");
    drillTitle.textContent = seqId + " × " + pred;
    drillBody.replaceChildren();
    const b = drillBody;

    append(b, h("p", {}, h("span.cellchip.v-" + c.v, {}, GLYPH[c.v]), " ", h("b", { id: "drill-verdict" }, WORDS[c.v]),
      c.reason ? [" — reason ", h("code", {}, c.reason)] : null, " after " + c.n + " step(s). ", h("span.mono", { id: "drill-label" }, c.label)));
    append(b, table(["tools run", "tools failed", "reminders", "resends", "tokens", "requests after the first unusable turn"],
      [[c.tools_run.join(", ") || "—", c.tools_failed.join(", ") || "—", c.reminders, c.resends, c.tokens, c.after_unusable]]));
    if (c.error) append(b, h("p", {}, h("b", {}, "error: "), h("span.mono", {}, c.error)));

    // steps and their rules
    append(b, h("h3", {}, "Steps (the loop's decisions)"));
    append(b, h("table", { id: "drill-steps" }, h("thead", {}, h("tr", {}, ["step", "turn (finish, calls)", "decision", "rule", "reason / ok", "run", "failed", "tokens"].map((x) => h("th", { scope: "col" }, x)))),
      h("tbody", {}, c.steps.map((st, i) => {
        const t = s.turns[st[0]];
        const r = ruleOf(pred, st[2]);
        return h("tr", {},
          h("td", {}, String(i + 1)), h("td", {}, st[0] + " (" + t.finish + ", " + t.calls.length + ")"),
          h("td", {}, (st[1] === "remind" ? "remind (reminder)" : st[1] === "resend" ? "resend (same request)" : st[1]),
            st[7] ? [" ", h("span.changes", {}, st[7])] : null),
          h("td", { title: r ? r.text : "" }, h("code.rule-id", {}, st[2])),
          h("td", {}, st[1] === "stop" ? show(st[3]) + " / ok=" + show(st[4]) : ""),
          h("td", {}, st[5].join(", ")), h("td", {}, st[6].join(", ")),
          h("td", {}, t.usage ? String(t.usage[0] + t.usage[1]) : "—"));
      }), c.elided ? h("tr", { id: "drill-elided" }, h("td", { colspan: 8 }, "… " + c.elided + " more step(s), not drawn: the page draws a cell's first "
        + c.steps.length + " (stopbench run --json lists them all)")) : null)));
    const used = [];
    for (const st of c.steps) if (used.indexOf(st[2]) < 0) used.push(st[2]);
    append(b, h("h3", {}, "Rules that decided, with their sources"));
    if (p.live) append(b, h("p", { id: "drill-rules" }, "A live program declares no rules: every step is \"observed\", as the server inferred it."));
    else append(b, h("ul", { id: "drill-rules" }, used.map((id) => {
      const r = ruleOf(pred, id);
      return h("li", { "data-rule": id }, h("code.rule-id", {}, id), r ? [h("div.ruletext", {}, r.text),
        r.links.length ? h("ul.cites", {}, r.links.map((l) => h("li", {}, link(l)))) : h("div.ruletext", {}, "(no link: this citation names no git commit or tag with a file; its text above is the source)")]
        : h("div.ruletext", {}, "(not a declared rule)"));
    })));

    // requirements
    append(b, h("h3", {}, "Requirement violations"));
    if (c.violations.length) {
      append(b, h("div", { id: "drill-violations" }, table(["requirement", "step", "detail"], c.violations.map((v) => [h("code", {}, v.requirement), show(v.step), v.guess ? v.detail + " (a guess: a result read by its wording)" : v.detail]))));
    } else append(b, h("p", { id: "drill-violations" }, Object.keys(s.require).length ? "None: the cell meets every requirement." : "The sequence states no requirement."));
    if (Object.keys(s.require).length) append(b, h("p", {}, "require: ", h("code", {}, JSON.stringify(s.require))));

    // golden
    append(b, h("h3", {}, "Golden file"));
    if (c.golden === "live") append(b, h("p", { id: "drill-live" }, "None: observed live. A program was run against the replay server by stopbench check ("
      + p.source + "); the server inferred each step from its requests. The cell is judged against the sequence's requirements, never replayed and never compared with a golden file."));
    else if (c.golden === "match") append(b, h("p", {}, "Matches its reviewed expectation in expected/" + pred + ".yaml."));
    if (c.expected) {
      const basis = { source: "read from the pinned source", observed: "observed by driving the original loop", rule: "the rule the loop states" };
      append(b, h("p", { id: "drill-basis" }, "basis: ", h("b", {}, c.expected.basis), " (" + (basis[c.expected.basis] || "") + ")",
        c.expected.note ? [h("br"), "note: " + c.expected.note] : null));
    }
    else if (c.golden === "live") { /* said above */ }
    else if (c.golden === "unreviewed") append(b, h("p", {}, "Unreviewed: no expectation in expected/" + pred + ".yaml (review with stopbench show " + seqId + " -p " + pred + ", then stopbench accept)."));
    else append(b, h("div", { id: "drill-mismatch" }, h("p", {}, h("b", {}, "Mismatch: " + c.mismatch.what)),
      table(["expected", "got"], [[h("pre", {}, c.mismatch.expected), h("pre", {}, c.mismatch.actual)]]),
      c.expected ? table(["expected path", "got path"], [[h("ol.mono", {}, c.expected.path.map((x) => h("li", {}, x))),
        h("ol.mono", {}, pathOf(c).map((x) => h("li", {}, x)))]]) : null));

    // conformance
    if (c.conformance) {
      const k = c.conformance;
      append(b, h("h3", {}, "The original loop (conformance record)"));
      append(b, h("div", { id: "drill-conformance" }, h("p", {}, "status: ", h("span.badge", {}, k.status),
        p.conformance ? [" — driver ", h("code", {}, p.conformance.driver), ", ", h("span.mono", {}, p.conformance.install)] : null),
        k.status === "not run" ? h("p", {}, "not run: " + (k.not_run || "the record has no row for this sequence"))
          : k.status === "not driven" ? h("p", { id: "drill-not-driven" }, "not driven (the driver cannot produce this case for this loop; nothing was compared, so it is not explained either): " + k.not_driven)
          : h("div.side", {},
          h("div", {}, h("b", {}, pred + ", the port (recorded)"), h("pre", {}, show(k.port))),
          h("div", {}, h("b", {}, pred + "@original, observed by the server"), h("pre", {}, show(k.original)))),
        k.status === "not run" || k.status === "not driven" ? null : confSteps(c, k, pred),
        k.port && k.port !== c.label ? h("p", {}, "The port's cell has changed since the record: now ", h("span.mono", {}, c.label), " (run stopbench conform " + (p.conformance ? p.conformance.driver : pred) + " again).") : null,
        k.difference ? h("p", {}, "first difference: ", h("span.mono", {}, k.difference)) : null,
        k.why ? h("p", {}, "explained: " + k.why) : null,
        k.driver_error ? h("p", {}, "driver error: " + k.driver_error) : null));
    }

    // sequence
    append(b, h("h3", {}, "Sequence"));
    append(b, h("p", {}, h("b", { id: "drill-seq-title" }, s.title), " — ", h("code", {}, s.id), " · " + s.group + " (" + s.kind + ") · " + s.dialect + " · then: " + s.then
      + (s.tags.length ? " · tags: " + s.tags.join(", ") : "")));
    append(b, h("p.ruletext", {}, "provenance: " + s.source));
    if (s.links.length) append(b, h("p", {}, s.links.map((l) => [link(l), " "])));
    append(b, h("table", { id: "drill-turns" }, h("thead", {}, h("tr", {}, ["turn", "finish / raw", "content", "tool calls", "error, steer, usage"].map((x) => h("th", { scope: "col" }, x)))),
      h("tbody", {}, s.turns.map(turnBlock), s.turns_elided ? h("tr", { id: "drill-turns-elided" }, h("td", { colspan: 5 },
        "… " + s.turns_elided + " more turn(s), not drawn: the page draws a sequence's first turns and those its drawn steps use")) : null)));

    // the loop
    append(b, h("h3", {}, "The loop"));
    append(b, loopCard(p, false));
    append(b, h("p", {}, h("button", { type: "button", id: "drill-walk" }, "Walk this sequence in the stepper")));
    document.getElementById("drill-walk").addEventListener("click", () => { setStepper(seqId, 1); closeDrill(); document.getElementById("stepper").scrollIntoView(); });

    drill.hidden = false;
    drill.scrollTop = 0;
    drill.focus();
    setHash("#" + td.id);
  }

  // ------------------------------------------------------------------ stepper
  const stSeq = document.getElementById("st-seq");
  const stPos = document.getElementById("st-pos");
  const stBody = document.getElementById("st-body");
  let stK = 1;

  function maxSteps(seqId) {
    let n = 0;
    for (const p of PRED_NAMES) { const c = cellOf(seqId, p); if (c) n = Math.max(n, c.steps.length); }
    return Math.max(n, 1);
  }
  function setStepper(seqId, k) {
    if (seqId !== null) stSeq.value = seqId;
    const last = maxSteps(stSeq.value);
    stK = Math.max(1, Math.min(last, k));
    renderStepper();
  }
  function step(d) { setStepper(null, stK + d); }

  function renderStepper() {
    const seqId = stSeq.value;
    const s = SEQS.get(seqId);
    const last = maxSteps(seqId);
    stPos.textContent = "step " + stK + " of " + last;
    document.getElementById("st-back").disabled = stK <= 1;
    document.getElementById("st-fwd").disabled = stK >= last;
    stBody.replaceChildren();
    if (!s) return;
    const served = new Map();  // turn -> the loops it answers at this step (a reactive sequence can differ per loop)
    const trs = [];
    for (const p of PRED_NAMES) {
      const c = cellOf(seqId, p);
      if (!c) continue;
      const st = c.steps[stK - 1];
      if (st) {
        if (!served.has(st[0])) served.set(st[0], []);
        served.get(st[0]).push(p);
        trs.push(h("tr", { "data-pred": p }, h("th", { scope: "row" }, p), h("td", {}, "turn " + st[0]), h("td", {}, h("b", {}, st[1]), st[7] ? [" ", h("span.changes", {}, st[7])] : null),
          h("td", {}, h("code", {}, st[2])), h("td", {}, st[1] === "stop" ? show(st[3]) + " / ok=" + show(st[4]) : ""),
          h("td", {}, st[5].join(", ")), h("td", {}, st[6].join(", "))));
      } else {
        trs.push(h("tr.ended", { "data-pred": p }, h("th", { scope: "row" }, p), h("td", { colspan: 6 },
          "ended at step " + c.n + ": " + GLYPH[c.v] + " " + WORDS[c.v] + (c.reason ? " (" + c.reason + ")" : ""))));
      }
    }
    append(stBody, h("p", {}, h("b", {}, s.title), " — " + s.dialect + ", then: " + s.then + ", " + s.turns.length + " turn(s)"));
    if (served.size) {
      // each turn actually served at this step; in a reactive sequence loops that reacted differently get different turns
      let first = true;
      for (const [turn, loops] of served) {
        const t = s.turns[turn];
        const who = served.size > 1 ? " (for " + loops.join(", ") + ")" : "";
        append(stBody, h("div.turnbox", first ? { id: "st-turn", "data-turn": turn } : { "data-turn": turn }, "Request " + stK + " is answered by turn " + turn + who + ": finish ", h("b", {}, t.finish),
          " (raw " + (t.raw === null ? "none" : JSON.stringify(t.raw)) + "), content " + (t.content === null ? "null" : JSON.stringify(t.content.slice(0, 200))),
          t.calls.length ? ", calls: " + t.calls.map((x) => x.name).join(", ") : ", no calls", t.error ? ", error " + (t.error.kind || t.error.type) : "",
          t.steer ? ", steer: " + t.steer : "", t.after ? ", after: " + afterText(t.after) : ""));
        first = false;
      }
    } else append(stBody, h("div.turnbox", { id: "st-turn" }, "No loop makes a request " + stK + "."));
    append(stBody, h("table", { id: "st-table" }, h("thead", {}, h("tr", {}, ["loop", "turn", "decision", "rule", "reason / ok", "run", "failed"].map((x) => h("th", { scope: "col" }, x)))),
      h("tbody", {}, trs)));
  }
  stSeq.addEventListener("change", () => setStepper(null, 1));
  document.getElementById("st-back").addEventListener("click", () => step(-1));
  document.getElementById("st-fwd").addEventListener("click", () => step(1));

  // the matrix's column heads stick under the filter bar, whose height depends on the window's width
  const bar = document.getElementById("filters");
  function barHeight() { document.documentElement.style.setProperty("--barh", bar.offsetHeight + "px"); }
  window.addEventListener("resize", barHeight);
  barHeight();

  // Checked here, in the reader's browser, from the embedded data alone: each reviewed cell's decision
  // path against the path its golden file expects, and each matrix cell's glyph against its verdict.
  function liveCheck() {
    let reviewed = 0, same = 0, shown = 0;
    const odd = [];
    for (const td of document.querySelectorAll("td.cell[data-v]")) {
      const c = cellOf(td.dataset.seq, td.dataset.pred);
      if (!c || td.querySelector(".glyph").textContent !== GLYPH[c.v]) { odd.push(td.id); continue; }
      shown++;
      if (!c.expected) continue;
      reviewed++;
      if (pathOf(c).join("|") === c.expected.path.join("|")) same++;
      else if (c.golden === "match") odd.push(td.id);
    }
    const el = document.getElementById("live-check");
    el.textContent = "Checked in this browser: " + shown + " cells drawn as their verdicts; " + same + " of " + reviewed
      + " reviewed cells follow the decision path expected/ gives them" + (odd.length ? "; INCONSISTENT: " + odd.join(", ") : ".");
    el.classList.toggle("bad", odd.length > 0);
  }

  applyFilters();
  setStepper(stSeq.value, 1);
  liveCheck();
  function openLinked() {
    const linked = location.hash.startsWith("#cell-") && document.getElementById(decodeURIComponent(location.hash.slice(1)));
    if (linked && linked.matches("td.cell")) { linked.scrollIntoView({ block: "center" }); focusCell(linked); openDrill(linked); }
  }
  window.addEventListener("hashchange", openLinked);
  openLinked();
})();

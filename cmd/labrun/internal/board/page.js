// labrun's class board: sorting, filtering and a cell's message. The
// grid is rendered by labrun; this only reorders and hides its rows (each
// sort is one sort of the rows and one move of them into the table) and
// shows a cell's text through textContent, never as HTML. The state of
// the view is in the URL's fragment, so a view can be linked to:
// #sort=task-2, #sort=-learner (descending), #only=wrong, #find=07,
// #show=ROW.TASK (the learner of index ROW, task TASK from 1).
(function () {
  "use strict";
  var grid = document.getElementById("grid");
  if (!grid) {
    return;
  }
  var body = grid.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var first = Number(grid.getAttribute("data-first"));
  var heads = Array.prototype.slice.call(grid.tHead.rows[0].cells);
  var rank = {};
  document.querySelectorAll("#legend [data-state]").forEach(function (li) {
    rank[li.getAttribute("data-state")] = Number(li.getAttribute("data-rank"));
  });
  var label = {};
  document.querySelectorAll("#legend [data-state]").forEach(function (li) {
    label[li.getAttribute("data-state")] = li.textContent.replace(li.firstChild.textContent, "");
  });
  var byName = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });
  var view = { sort: "", only: "", find: "", show: "" };

  function stateOf(td) {
    return td.className.replace(/^s-/, "").split(" ")[0];
  }

  // comparator gives the order of a sort key: learner, score, class or
  // task-N; null for an unknown key.
  function comparator(key) {
    if (key === "learner") {
      return function () { return 0; };
    }
    if (key === "score") {
      return function (a, b) { return a.dataset.p - b.dataset.p; };
    }
    if (key === "class") {
      return function (a, b) { return a.dataset.r - b.dataset.r; };
    }
    var m = /^task-(\d+)$/.exec(key);
    if (m && Number(m[1]) >= 1 && first + Number(m[1]) - 1 < heads.length - 1) {
      var col = first + Number(m[1]) - 1;
      return function (a, b) {
        return rank[stateOf(a.cells[col])] - rank[stateOf(b.cells[col])];
      };
    }
    return null;
  }

  function sortRows(spec) {
    var desc = spec.charAt(0) === "-";
    var key = desc ? spec.slice(1) : spec;
    var cmp = comparator(key);
    if (!cmp) {
      return;
    }
    var keyed = rows.map(function (r) { return { r: r, n: r.dataset.n }; });
    keyed.sort(function (a, b) {
      var c = cmp(a.r, b.r);
      if (desc) {
        c = -c;
      }
      if (c === 0) {
        c = byName.compare(a.n, b.n);
        if (desc && key === "learner") {
          c = -c;
        }
      }
      return c;
    });
    var frag = document.createDocumentFragment();
    keyed.forEach(function (k) { frag.appendChild(k.r); });
    body.appendChild(frag);
    heads.forEach(function (th) {
      var b = th.querySelector("button");
      if (b && b.dataset.sort === key) {
        th.setAttribute("aria-sort", desc ? "descending" : "ascending");
      } else {
        th.removeAttribute("aria-sort");
      }
    });
    document.querySelectorAll(".sorts button").forEach(function (b) {
      b.setAttribute("aria-pressed", String(b.dataset.sort === key));
    });
  }

  function matches(r) {
    var v = r.dataset.v;
    if (view.only === "not-passed" && v === "passed") {
      return false;
    }
    if (view.only === "wrong" && v !== "wrong") {
      return false;
    }
    if (view.only === "not-graded" && v !== "not-graded" && v !== "missing") {
      return false;
    }
    return view.find === "" || r.dataset.n.toLowerCase().indexOf(view.find.toLowerCase()) >= 0;
  }

  function filterRows() {
    var n = 0;
    rows.forEach(function (r) {
      var ok = matches(r);
      r.hidden = !ok;
      if (ok) {
        n++;
      }
    });
    document.getElementById("shown").textContent =
      n === rows.length ? rows.length + " learners" : n + " of " + rows.length + " learners shown";
  }

  // text is what a cell says: its learner, its task, its state, its
  // message (a learner not graded at all: the learner's first failure)
  // and its hint.
  function text(td) {
    var tr = td.parentNode;
    var state = stateOf(td);
    var msg = td.dataset.m || "";
    if (!msg && state !== "passed") {
      msg = tr.cells[tr.cells.length - 1].textContent;
    }
    return {
      who: tr.dataset.n,
      task: heads[td.cellIndex].dataset.name,
      state: state,
      label: label[state] || state,
      msg: msg,
      hint: td.dataset.h || ""
    };
  }

  var picked = null;
  function show(td) {
    var detail = document.getElementById("detail");
    if (picked) {
      picked.classList.remove("picked");
    }
    picked = td;
    if (!td) {
      detail.hidden = true;
      return;
    }
    td.classList.add("picked");
    var t = text(td);
    document.getElementById("d-who").textContent = t.who;
    document.getElementById("d-task").textContent = t.task;
    var badge = document.getElementById("d-state");
    badge.textContent = td.textContent + " " + t.label;
    badge.className = "badge s-" + t.state;
    document.getElementById("d-msg").textContent = t.msg;
    document.getElementById("d-msg").hidden = t.msg === "";
    document.querySelector("#d-hint span").textContent = t.hint;
    document.getElementById("d-hint").hidden = t.hint === "";
    detail.hidden = false;
  }

  function cellAt(spec) {
    var m = /^(\d+)\.(\d+)$/.exec(spec);
    if (!m) {
      return null;
    }
    var tr = body.querySelector('tr[data-i="' + m[1] + '"]');
    var col = first + Number(m[2]) - 1;
    if (!tr || Number(m[2]) < 1 || col >= tr.cells.length - 1) {
      return null;
    }
    return tr.cells[col];
  }

  function save() {
    var p = new URLSearchParams();
    Object.keys(view).forEach(function (k) {
      if (view[k]) {
        p.set(k, view[k]);
      }
    });
    var hash = p.toString();
    history.replaceState(null, "", hash ? "#" + hash : location.pathname + location.search);
  }

  function load() {
    var p = new URLSearchParams(location.hash.replace(/^#/, ""));
    view.sort = p.get("sort") || "";
    view.only = p.get("only") || "";
    view.find = p.get("find") || "";
    view.show = p.get("show") || "";
    document.getElementById("only").value = view.only;
    document.getElementById("find").value = view.find;
    sortRows(view.sort || "learner");
    filterRows();
    show(cellAt(view.show));
  }

  document.addEventListener("click", function (e) {
    var b = e.target.closest("button[data-sort]");
    if (b) {
      var key = b.dataset.sort;
      view.sort = view.sort === key ? "-" + key : key;
      sortRows(view.sort);
      save();
      return;
    }
    if (e.target.closest("#close")) {
      view.show = "";
      show(null);
      save();
      return;
    }
    var td = e.target.closest("#grid tbody td[class^='s-']");
    if (td) {
      view.show = td.parentNode.dataset.i + "." + (td.cellIndex - first + 1);
      show(td);
      save();
    }
  });
  document.getElementById("find").addEventListener("input", function (e) {
    view.find = e.target.value;
    filterRows();
    save();
  });
  document.getElementById("only").addEventListener("change", function (e) {
    view.only = e.target.value;
    filterRows();
    save();
  });
  document.addEventListener("keydown", function (e) {
    if (e.key === "Escape" && picked) {
      view.show = "";
      show(null);
      save();
    }
  });

  var tip = document.getElementById("tip");
  body.addEventListener("mouseover", function (e) {
    var td = e.target.closest("td[class^='s-']");
    if (!td) {
      tip.hidden = true;
      return;
    }
    var t = text(td);
    tip.textContent = "";
    var head = document.createElement("b");
    head.textContent = t.who + " \u00b7 " + t.task + ": " + t.label;
    tip.appendChild(head);
    if (t.msg) {
      tip.appendChild(document.createTextNode(t.msg));
    }
    if (t.hint) {
      tip.appendChild(document.createElement("br"));
      tip.appendChild(document.createTextNode("Hint: " + t.hint));
    }
    var box = td.getBoundingClientRect();
    tip.hidden = false;
    var x = Math.min(box.left, window.innerWidth - tip.offsetWidth - 8);
    var y = box.bottom + 6;
    if (y + tip.offsetHeight > window.innerHeight) {
      y = box.top - tip.offsetHeight - 6;
    }
    tip.style.left = Math.max(8, x) + "px";
    tip.style.top = Math.max(8, y) + "px";
  });
  body.addEventListener("mouseleave", function () { tip.hidden = true; });
  window.addEventListener("hashchange", load);
  load();
})();

/* total-recall viewer: charts, live refresh, jump to a message, copy buttons. No transcript text is
   ever turned into markup here: pages arrive escaped from the server and are swapped in whole. */
(function () {
  "use strict";
  var POLL_MS = 2000;

  function charts(root) {
    var el = root.querySelector("#usage-data");
    if (!el || typeof Chart === "undefined") return;
    var u = JSON.parse(el.textContent);
    root.querySelectorAll("canvas[data-chart]").forEach(function (c) {
      var key = c.getAttribute("data-chart"), kind = c.getAttribute("data-kind") || "bar";
      var labels, sets;
      if (key === "sessions") {
        labels = u.sessions_per_day.days;
        sets = [{ label: "sessions", data: u.sessions_per_day.counts }];
      } else {
        var p = key.split(".");
        labels = u.periods;
        sets = u[p[0]][p[1]];
      }
      var old = Chart.getChart(c);
      if (old) old.destroy();
      var stacked = kind === "bar" ? { x: { stacked: true }, y: { stacked: true } } : {};
      new Chart(c, {
        type: kind,
        data: { labels: labels, datasets: sets.map(function (d) { return { label: d.label, data: d.data }; }) },
        options: { animation: false, responsive: true, maintainAspectRatio: false, scales: stacked },
      });
      var n = 0;
      sets.forEach(function (d) { n += d.data.length; });
      c.setAttribute("data-points", String(n));
    });
  }

  function jump() {
    if (!location.hash) return;
    var el = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    if (!el) return;
    for (var p = el; p; p = p.parentElement) if (p.tagName === "DETAILS") p.open = true;
    document.querySelectorAll(".jumped").forEach(function (t) { t.classList.remove("jumped"); });
    el.classList.add("jumped");
    el.scrollIntoView({ block: "center" });
  }

  function wire(root) {
    root.querySelectorAll("button[data-copy]").forEach(function (b) {
      b.addEventListener("click", function () {
        var src = document.getElementById(b.getAttribute("data-copy"));
        if (src && navigator.clipboard) navigator.clipboard.writeText(src.textContent);
      });
    });
    root.querySelectorAll("#filters select, #filters input[type=checkbox], #filters input[type=date]").forEach(
      function (i) { i.addEventListener("change", function () { i.form.submit(); }); }
    );
  }

  function live() {
    var mode = document.body.getAttribute("data-live");
    var badge = document.getElementById("live");
    if (!badge || mode === "off" || location.protocol === "file:" || !window.fetch) return;
    badge.classList.add("on");
    var last = null;
    setInterval(function () {
      fetch("/api/stamp", { cache: "no-store" }).then(function (r) { return r.json(); }).then(function (j) {
        if (last === null || j.stamp === last) { last = j.stamp; return; }
        last = j.stamp;
        if (mode !== "swap") {
          badge.textContent = "index updated: reload";
          badge.classList.add("stale");
          badge.onclick = function () { location.reload(); };
          return;
        }
        fetch(location.href, { cache: "no-store" }).then(function (r) { return r.text(); }).then(function (html) {
          var fresh = new DOMParser().parseFromString(html, "text/html").getElementById("main");
          var main = document.getElementById("main");
          if (!fresh || !main) return;
          main.replaceWith(document.adoptNode(fresh));
          wire(fresh);
          charts(fresh);
          badge.setAttribute("data-updated", String(Date.now()));
        });
      }).catch(function () { badge.classList.add("down"); });
    }, POLL_MS);
  }

  function start() {
    wire(document);
    charts(document);
    jump();
    live();
    window.addEventListener("hashchange", jump);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();

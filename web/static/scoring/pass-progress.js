// Live progress of a scoring pass: poll the pass's progress.json and move the bar.
// The page shows the same numbers without this script (and refreshes itself then).
(function () {
  "use strict";
  var section = document.getElementById("pass-progress");
  if (!section || section.dataset.finished === "true") return;
  var url = section.dataset.progressUrl;
  var bar = document.getElementById("pass-bar");
  var delay = 1000;

  function show(name, value) {
    var field = section.querySelector('[data-field="' + name + '"]');
    if (field) field.textContent = value;
    return field;
  }

  function update(p) {
    bar.max = p.total || 1;
    bar.value = p.done;
    bar.textContent = p.percent + "%";
    ["status", "percent", "done", "total", "written", "skipped", "existing"].forEach(function (name) {
      show(name, p[name]);
    });
    var status = section.querySelector('[data-field="status"]');
    status.className = "badge status-" + p.status;
    var error = show("error", p.error || "");
    if (error) error.hidden = !p.error;
  }

  function poll() {
    fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.json();
      })
      .then(function (p) {
        update(p);
        if (p.finished) {
          // The skips table is rendered by the server: load it once the pass is over.
          window.location.reload();
          return;
        }
        delay = 1000;
        setTimeout(poll, delay);
      })
      .catch(function () {
        delay = Math.min(delay * 2, 15000);
        setTimeout(poll, delay);
      });
  }

  setTimeout(poll, delay);
})();

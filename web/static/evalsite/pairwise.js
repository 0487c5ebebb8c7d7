// Pairwise review's keys. Progressive enhancement: each key presses a button or follows a
// link that works without JavaScript. Keys typed into a field stay in the field.
(function () {
  "use strict";
  var links = { j: "next-link", k: "previous-link" };
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var tag = (event.target.tagName || "").toLowerCase();
    if (tag === "input" || tag === "textarea" || tag === "select") return;
    var button = document.querySelector('#pairwise-form button[data-key="' + event.key + '"]');
    if (button) {
      event.preventDefault();
      button.click();
    } else if (links[event.key] && document.getElementById(links[event.key])) {
      event.preventDefault();
      window.location.href = document.getElementById(links[event.key]).href;
    } else if (event.key === "?") {
      var help = document.getElementById("keys-help");
      if (help) help.open = !help.open;
    }
  });
})();

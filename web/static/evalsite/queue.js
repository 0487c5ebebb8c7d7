// The annotation queue's keys. Progressive enhancement: every key presses a button or
// follows a link that works without JavaScript. Keys typed into a field stay in the field.
(function () {
  "use strict";
  var form = document.getElementById("label-form");
  var groups = form ? Array.prototype.slice.call(form.querySelectorAll(".label-group")) : [];
  var active = 0;

  function radios(group) { return Array.prototype.slice.call(group.querySelectorAll("input[type=radio]")); }
  function hasValue(group) {
    var number = group.querySelector("input[type=number]");
    return number ? number.value !== "" : radios(group).some(function (r) { return r.checked; });
  }
  function show(index) {
    groups.forEach(function (g, i) { g.classList.toggle("active", i === index); });
    active = index;
  }
  function submit(target) {
    if (!target) return;
    if (target.requestSubmit) target.requestSubmit(); else target.submit();
  }
  function follow(id) {
    var link = document.getElementById(id);
    if (link) window.location.href = link.href;
  }
  function pick(group, index) {
    var choices = radios(group);
    if (index < 0 || index >= choices.length) return;
    choices[index].checked = true;
    var next = groups.findIndex(function (g) { return !hasValue(g); });
    if (next === -1) submit(form); else show(next);
  }
  function groupFor(kind) {
    var current = groups[active];
    if (current && (kind === "boolean") === (current.dataset.kind === "boolean") && radios(current).length) return current;
    return groups.find(function (g) { return (kind === "boolean") === (g.dataset.kind === "boolean") && radios(g).length; });
  }

  if (groups.length) {
    var first = groups.findIndex(function (g) { return !hasValue(g); });
    show(first === -1 ? 0 : first);
    groups.forEach(function (g, i) { g.addEventListener("focusin", function () { show(i); }); });
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var tag = (event.target.tagName || "").toLowerCase();
    var typing = tag === "textarea" || tag === "select" || (tag === "input" && event.target.type !== "radio");
    if (typing) {
      if (event.key === "Escape") event.target.blur();
      return;
    }
    var key = event.key;
    var handled = true;
    if ((key === "y" || key === "n") && groupFor("boolean")) {
      var yesNo = groupFor("boolean");
      show(groups.indexOf(yesNo));
      pick(yesNo, key === "y" ? 0 : 1);
    } else if (/^[1-9]$/.test(key) && groupFor("other")) {
      var group = groupFor("other");
      show(groups.indexOf(group));
      pick(group, Number(key) - 1);
    } else if (key === "Enter") {
      submit(form || document.getElementById("expected-form"));
    } else if (key === "s") {
      submit(document.getElementById("skip-form"));
    } else if (key === "j") {
      follow("next-link");
    } else if (key === "k") {
      follow("previous-link");
    } else if (key === "c") {
      follow("capture-link");
    } else if (key === "e") {
      var expected = document.getElementById("id_expected_output");
      if (expected) expected.focus(); else follow("edit-link");
    } else if (key === "?") {
      var help = document.getElementById("keys-help");
      if (help) help.open = !help.open;
    } else {
      handled = false;
    }
    if (handled) event.preventDefault();
  });
})();

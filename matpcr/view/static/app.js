// matpcr view: keyboard shortcuts for the audit workbench, and a note where a figure cannot be drawn.
// No inline script is allowed by the page's Content-Security-Policy; everything lives here.
(function () {
  "use strict";

  function typing(target) {
    var tag = (target && target.tagName) || "";
    return tag === "TEXTAREA" || tag === "INPUT" || tag === "SELECT" || (target && target.isContentEditable);
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) {
      return;
    }
    var form = document.getElementById("label-form");
    if (!form) {
      return;
    }
    var key = event.key.toLowerCase();
    var buttons = form.querySelectorAll("button[data-keys]");
    for (var i = 0; i < buttons.length; i++) {
      if (buttons[i].getAttribute("data-keys").split(" ").indexOf(key) >= 0) {
        event.preventDefault();
        buttons[i].click();
        return;
      }
    }
    var link = null;
    if (key === "n" || key === "arrowright") {
      link = document.getElementById("next");
    } else if (key === "p" || key === "arrowleft") {
      link = document.getElementById("prev");
    }
    if (link) {
      event.preventDefault();
      window.location.assign(link.getAttribute("href"));
    }
  });

  function noFigure(img) {
    var note = document.createElement("p");
    note.className = "muted no-figure";
    note.textContent = "No figure for this claim (the oracle draws none, or could not draw it).";
    img.replaceWith(note);
  }

  document.addEventListener("DOMContentLoaded", function () {
    var figures = document.querySelectorAll("img.figure");
    for (var i = 0; i < figures.length; i++) {
      var img = figures[i];
      if (img.complete && img.naturalWidth === 0) {
        noFigure(img);
      } else {
        img.addEventListener("error", function (e) { noFigure(e.target); });
      }
    }
  });
})();

/* pubsearch: the page works without this file; it only makes it quicker to use.
 *   "/"            focuses the search box
 *   facets, sort   apply as soon as they change
 *   author filter  type to filter a long list of authors
 *   the URL        stays clean: empty fields and default values are left out
 */
(function () {
  "use strict";

  var root = document.documentElement;
  root.classList.remove("no-js");
  root.classList.add("js");

  function fold(text) {
    return text.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase().trim();
  }

  function isTyping(target) {
    return target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
  }

  function submitNow(form) {
    if (typeof form.requestSubmit === "function") {
      form.requestSubmit();
    } else {
      form.dispatchEvent(new Event("submit", { cancelable: true }));
    }
  }

  function init() {
    var form = document.getElementById("search");
    var box = document.getElementById("q");

    document.addEventListener("keydown", function (event) {
      if (event.key !== "/" || event.ctrlKey || event.metaKey || event.altKey) return;
      if (!box || isTyping(event.target)) return;
      event.preventDefault();
      box.focus();
      box.select();
    });

    if (!form) return;

    // The URL is the state: build it from the form, without empty or default values.
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var params = new URLSearchParams();
      Array.prototype.forEach.call(form.elements, function (el) {
        if (!el.name || el.disabled) return;
        if ((el.type === "checkbox" || el.type === "radio") && !el.checked) return;
        var value = String(el.value).trim();
        if (!value || value === el.getAttribute("data-default")) return;
        params.append(el.name, value);
      });
      var query = params.toString();
      document.body.classList.add("is-loading");
      window.location.assign(form.getAttribute("action") + (query ? "?" + query : ""));
    });

    form.addEventListener("change", function (event) {
      var el = event.target;
      if (el.type === "checkbox" || el.tagName === "SELECT") submitNow(form);
    });

    // Coming back (Back button) to a page kept in memory: show what its URL says,
    // not the boxes ticked just before leaving it.
    window.addEventListener("pageshow", function (event) {
      if (event.persisted) {
        form.reset();
        document.body.classList.remove("is-loading");
      }
    });

    Array.prototype.forEach.call(document.querySelectorAll("[data-filter-list]"), function (input) {
      var list = document.getElementById(input.getAttribute("data-filter-list"));
      if (!list) return;
      input.parentElement.hidden = false;
      input.addEventListener("input", function () {
        var needle = fold(input.value);
        Array.prototype.forEach.call(list.children, function (item) {
          item.hidden = needle !== "" && fold(item.textContent).indexOf(needle) < 0;
        });
      });
      input.addEventListener("keydown", function (event) {
        if (event.key === "Enter") event.preventDefault();
      });
    });

    // Filters fold away on narrow screens (they are open when there is no script).
    var filters = document.querySelector("details.filters");
    if (filters && window.matchMedia) {
      var narrow = window.matchMedia("(max-width: 800px)");
      var fit = function () { filters.open = !narrow.matches; };
      fit();
      if (narrow.addEventListener) narrow.addEventListener("change", fit);
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();

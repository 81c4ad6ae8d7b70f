/* pubsearch: the page works without this file; it only makes it quicker to use.
 *   "/"            focuses the search box
 *   typing         the results and facets follow the box (its URL replaces the page's)
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
    function formUrl() {
      var params = new URLSearchParams();
      Array.prototype.forEach.call(form.elements, function (el) {
        if (!el.name || el.disabled) return;
        if ((el.type === "checkbox" || el.type === "radio") && !el.checked) return;
        var value = String(el.value).trim();
        if (!value || value === el.getAttribute("data-default")) return;
        params.append(el.name, value);
      });
      var query = params.toString();
      return form.getAttribute("action") + (query ? "?" + query : "");
    }

    var typingTimer = 0;
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      window.clearTimeout(typingTimer);
      document.body.classList.add("is-loading");
      window.location.assign(formUrl());
    });

    // As you type: once the box rests for TYPING_PAUSE ms, fetch the page its URL gives
    // (rendered by the server, as for Enter) and put its results and facets in place of
    // these; the address bar shows that URL (replaced, so Back does not step through
    // every prefix). Only the latest answer counts; a query the server refuses (half
    // typed syntax) leaves the results as they were, and Enter still shows why.
    var TYPING_PAUSE = 200;
    var latest = 0;
    var inFlight = null;

    function follow() {
      var url = formUrl();
      var ticket = ++latest;
      if (inFlight) inFlight.abort();
      // Typed back to what is shown (and in the address bar): an answer still on its way,
      // for the text in between, would show results the box no longer asks for.
      if (url === window.location.pathname + window.location.search) {
        inFlight = null;
        document.body.classList.remove("is-loading");
        return;
      }
      var controller = inFlight = new AbortController();
      document.body.classList.add("is-loading");
      fetch(url, { signal: controller.signal, headers: { Accept: "text/html" } })
        .then(function (response) { return response.ok ? response.text() : null; })
        .then(function (html) {
          if (ticket !== latest || html === null) return;
          var next = new DOMParser().parseFromString(html, "text/html");
          var fresh = next.querySelector("#search .layout");
          var current = form.querySelector(".layout");
          if (!fresh || !current) return;
          current.replaceWith(document.adoptNode(fresh));
          document.title = next.title;
          window.history.replaceState(null, "", url);
          enhance();
          announce(form.querySelector(".total"));
        })
        .catch(function () { /* aborted, or offline: Enter still searches */ })
        .then(function () {
          if (ticket === latest) document.body.classList.remove("is-loading");
        });
    }

    // A status put in place is not read out by screen readers (only changes to one that
    // was already there are): the new total goes to a status region that stays.
    var spoken = null;
    function announce(total) {
      if (!total) return;
      if (!spoken) {
        spoken = document.createElement("p");
        spoken.id = "typing-status";
        spoken.className = "visually-hidden";
        spoken.setAttribute("role", "status");
        document.body.appendChild(spoken);
      }
      spoken.textContent = total.textContent.replace(/\s+/g, " ").trim();
    }

    if (box && window.fetch && window.DOMParser && window.AbortController) {
      box.addEventListener("input", function () {
        window.clearTimeout(typingTimer);
        typingTimer = window.setTimeout(follow, TYPING_PAUSE);
      });
    }

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

    enhance();
  }

  // What the results and facets need from the script: run on the page, and again each
  // time they are put in place as you type.
  var narrow = window.matchMedia ? window.matchMedia("(max-width: 800px)") : null;
  var fitFilters = function () {};

  function enhance() {
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
    if (filters && narrow) {
      if (narrow.removeEventListener) narrow.removeEventListener("change", fitFilters);
      fitFilters = function () { filters.open = !narrow.matches; };
      fitFilters();
      if (narrow.addEventListener) narrow.addEventListener("change", fitFilters);
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();

"""The script injected into a page to collect its accessible outline and tag elements with refs.

It runs as `page.evaluate(SNAPSHOT_SCRIPT, {"attribute", "nextRef", "maxNodes", "maxChars"})` and
returns `{"tree": [...], "nextRef": int, "truncated": bool}`. A tree item is either a string
(text; "\n" marks a block boundary) or an object `{role, name, ref?, value?, checked?, ...,
children?}`. Rendering is Python's job (`snapshot.render_tree`), so it can be tested without a
browser.

Refs live in an attribute on the element, so the element keeps its ref across snapshots of the
same document; new refs are numbered from `nextRef`, which the server keeps per session, so a ref
from a page the tab has since left never names an element of the new page.
"""

SNAPSHOT_SCRIPT = r"""
({ attribute, nextRef, maxNodes, maxChars }) => {
  let next = nextRef;
  let nodes = 0;
  let chars = 0;
  let truncated = false;
  const seen = new Set();

  const SKIPPED_TAGS = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "HEAD", "META", "LINK", "OPTION"]);
  // Roles that can be acted on, or are worth pointing at: these get a ref.
  const REF_ROLES = new Set([
    "link", "button", "textbox", "searchbox", "combobox", "listbox", "checkbox", "radio", "slider",
    "spinbutton", "switch", "tab", "menuitem", "menuitemcheckbox", "menuitemradio", "option",
    "treeitem", "heading", "clickable",
  ]);
  // Their name is their text, so their content is not walked again.
  const LEAF_ROLES = new Set([
    "link", "button", "textbox", "searchbox", "combobox", "listbox", "checkbox", "radio", "slider",
    "spinbutton", "switch", "tab", "menuitem", "menuitemcheckbox", "menuitemradio", "option",
    "heading", "img", "progressbar", "meter", "iframe",
  ]);
  const STRUCTURE = {
    NAV: "navigation", MAIN: "main", HEADER: "banner", FOOTER: "contentinfo", ASIDE: "complementary",
    FORM: "form", UL: "list", OL: "list", LI: "listitem", TABLE: "table", TR: "row", DIALOG: "dialog",
    FIELDSET: "group", DETAILS: "group",
  };
  // Their text is a value, not a name.
  const VALUE_ROLES = new Set(["textbox", "searchbox", "combobox", "listbox", "spinbutton", "slider"]);
  const BUTTON_INPUTS = new Set(["button", "submit", "reset", "image", "file", "color"]);

  const collapse = (text) => (text || "").replace(/\s+/g, " ");
  const clip = (text, limit) => (text.length > limit ? text.slice(0, limit - 1) + "\u2026" : text);
  const clean = (text, limit = 150) => clip(collapse(text).trim(), limit);

  function inputRole(el) {
    const type = (el.getAttribute("type") || "text").toLowerCase();
    if (type === "hidden") return null;
    if (type === "checkbox" || type === "radio") return type;
    if (BUTTON_INPUTS.has(type)) return "button";
    if (type === "range") return "slider";
    if (type === "number") return "spinbutton";
    if (type === "search") return "searchbox";
    return "textbox";
  }

  function roleOf(el) {
    const explicit = (el.getAttribute("role") || "").trim().split(/\s+/)[0];
    if (explicit && !["presentation", "none", "generic"].includes(explicit)) return explicit;
    const tag = el.tagName;
    if (tag === "A" || tag === "AREA") return el.hasAttribute("href") ? "link" : null;
    if (tag === "BUTTON" || tag === "SUMMARY") return "button";
    if (tag === "INPUT") return inputRole(el);
    if (tag === "SELECT") return el.multiple || el.size > 1 ? "listbox" : "combobox";
    if (tag === "TEXTAREA") return "textbox";
    if (/^H[1-6]$/.test(tag)) return "heading";
    if (tag === "IMG") return el.getAttribute("alt") ? "img" : null;
    if (tag === "IFRAME" || tag === "FRAME") return "iframe";
    if (el.isContentEditable && el.hasAttribute("contenteditable")) return "textbox";
    if (STRUCTURE[tag]) return STRUCTURE[tag];
    const tabindex = el.getAttribute("tabindex");
    if (el.hasAttribute("onclick") || (tabindex !== null && Number(tabindex) >= 0)) return "clickable";
    return null;
  }

  function textOf(el) {
    return el.innerText || el.textContent || "";
  }

  function labelledBy(el) {
    const ids = (el.getAttribute("aria-labelledby") || "").split(/\s+/).filter(Boolean);
    return ids.map((id) => el.ownerDocument.getElementById(id)).filter(Boolean).map(textOf).join(" ");
  }

  function nameOf(el, role) {
    const fromIds = clean(labelledBy(el));
    if (fromIds) return fromIds;
    const aria = clean(el.getAttribute("aria-label"));
    if (aria) return aria;
    const tag = el.tagName;
    if (el.labels && el.labels.length) {
      const label = clean(Array.from(el.labels).map(textOf).join(" "));
      if (label) return label;
    }
    if (tag === "INPUT" && BUTTON_INPUTS.has((el.type || "").toLowerCase())) {
      const fallback = el.type === "submit" ? "Submit" : el.type === "reset" ? "Reset" : "";
      return clean(el.value || el.alt || fallback);
    }
    if (tag === "IMG") return clean(el.getAttribute("alt"));
    if (tag === "IFRAME" || tag === "FRAME") return clean(el.title || el.getAttribute("src"));
    if (LEAF_ROLES.has(role) && !VALUE_ROLES.has(role)) {
      const text = clean(textOf(el));
      if (text) return text;
      const img = el.querySelector("img[alt], [aria-label]");
      if (img) return clean(img.getAttribute("alt") || img.getAttribute("aria-label"));
    }
    return clean(el.getAttribute("placeholder") || el.getAttribute("title") || "");
  }

  function describe(el, role) {
    const item = { role, name: nameOf(el, role) };
    const tag = el.tagName;
    if (role === "heading") {
      item.level = /^H[1-6]$/.test(tag) ? Number(tag[1]) : Number(el.getAttribute("aria-level")) || undefined;
    }
    if (role === "link") item.href = clip(el.getAttribute("href") || "", 150);
    if (tag === "SELECT") {
      const options = Array.from(el.options);
      item.value = clean(options.filter((o) => o.selected).map((o) => o.label).join(", "), 300);
      item.options = options.slice(0, 50).map((o) => clean(o.label, 80));
      if (options.length > 50) item.moreOptions = options.length - 50;
    } else if (tag === "INPUT" || tag === "TEXTAREA") {
      if (role === "checkbox" || role === "radio") item.checked = el.checked;
      else if (el.type === "password") item.value = "\u2022".repeat(el.value.length);  // never the secret
      else if (role !== "button") item.value = clip(el.value, 300);
    } else if (role === "textbox" && el.isContentEditable) {
      item.value = clean(textOf(el), 300);
    }
    const ariaChecked = el.getAttribute("aria-checked");
    if (ariaChecked !== null && item.checked === undefined) item.checked = ariaChecked === "true";
    const expanded = el.getAttribute("aria-expanded");
    if (expanded !== null) item.expanded = expanded === "true";
    if (el.disabled || el.getAttribute("aria-disabled") === "true") item.disabled = true;
    if (el.required) item.required = true;
    return item;
  }

  function refFor(el) {
    let ref = el.getAttribute(attribute);
    // A cloned element carries its original's ref: give the copy its own.
    if (!ref || !/^e\d+$/.test(ref) || seen.has(ref)) {
      ref = "e" + next++;
      el.setAttribute(attribute, ref);
    }
    seen.add(ref);
    return ref;
  }

  function isShown(el, style) {
    if (style.display === "contents") return true;  // no box of its own, but its children show
    if (typeof el.checkVisibility === "function") return el.checkVisibility({ checkVisibilityCSS: true });
    return style.display !== "none" && style.visibility !== "hidden";
  }

  function pushText(out, text) {
    if (!text) return;
    const last = out.length - 1;
    if (last >= 0 && typeof out[last] === "string") out[last] += text;
    else out.push(text);
    chars += text.length;
  }

  function budgetLeft() {
    if (nodes >= maxNodes || chars >= maxChars) truncated = true;
    return !truncated;
  }

  function walkChildren(el, out, muted) {
    if (el.tagName === "SLOT") {
      const assigned = el.assignedNodes({ flatten: true });
      if (assigned.length) { for (const node of assigned) walk(node, out, muted); return; }
    }
    const children = el.shadowRoot ? el.shadowRoot.childNodes : el.childNodes;
    for (const node of children) walk(node, out, muted);
  }

  // `muted`: inside a <label> of a control, whose text is already that control's name.
  function walk(node, out, muted) {
    if (!budgetLeft()) return;
    if (node.nodeType === Node.TEXT_NODE) {
      if (!muted) pushText(out, collapse(node.textContent));
      return;
    }
    if (node.nodeType !== Node.ELEMENT_NODE) return;
    const el = node;
    if (SKIPPED_TAGS.has(el.tagName) || el.getAttribute("aria-hidden") === "true") return;
    if (el.tagName === "BR") { pushText(out, "\n"); return; }
    const style = getComputedStyle(el);
    if (!isShown(el, style)) return;
    const role = roleOf(el);
    const block = !style.display.startsWith("inline");
    if (block) pushText(out, "\n");
    if (role) {
      const item = describe(el, role);
      if (REF_ROLES.has(role) || el.hasAttribute("role")) item.ref = refFor(el);
      out.push(item);
      nodes += 1;
      if (!LEAF_ROLES.has(role)) {
        item.children = [];
        walkChildren(el, item.children, muted);
        if (!item.children.length) delete item.children;
      }
    } else {
      walkChildren(el, out, muted || (el.tagName === "LABEL" && el.control != null));
    }
    if (block) pushText(out, "\n");
  }

  const tree = [];
  if (document.body) walk(document.body, tree, false);
  return { tree, nextRef: next, truncated };
}
"""

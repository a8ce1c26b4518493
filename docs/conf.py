"""Sphinx configuration of the offroad-env documentation (``make docs``).

The build is strict and offline: ``-W --keep-going -n`` (every warning and every broken
cross-reference fails it; nothing is suppressed), no intersphinx, no client-side maths, and
furo's own fonts and scripts served from the site. The environment cards are generated from
the registry at every build (``docs/cards.py``), so they cannot go stale.
"""

import re
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS))
sys.path.insert(0, str(DOCS.parent))

project = "offroad-env"
author = "the offroad-env developers"
copyright = "2026, the offroad-env developers"

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "README.md"]
nitpicky = True
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

autodoc_typehints = "none"  # shapes, frames and units are in the docstrings
autodoc_member_order = "bysource"
autodoc_inherit_docstrings = False  # Gymnasium's own docstrings belong to its docs
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_ivar = True

html_theme = "furo"
html_title = "offroad-env"
html_static_path = ["_static"]
html_last_updated_fmt = None
#: commands render as typed: ``--policy`` stays two hyphens (docutils' smart quotes would make
#: it an en dash, and a copied command would break)
smartquotes = False
#: the search's ranking (docs/_static/search_scorer.js): a page whose title names the query
#: first, guides before API entries, the history pages last
html_search_scorer = str(DOCS / "_static" / "search_scorer.js")


#: the documentation of the libraries this one builds on: a reference to one of their objects
#: links there (a fixed address per package, no inventory fetched at build time)
EXTERNAL = {"torch": "https://docs.pytorch.org/docs/stable/",
            "numpy": "https://numpy.org/doc/stable/reference/",
            "gymnasium": "https://gymnasium.farama.org/api/",
            "stable_baselines3": "https://stable-baselines3.readthedocs.io/en/master/",
            "torchrl": "https://docs.pytorch.org/rl/stable/",
            "tensordict": "https://docs.pytorch.org/tensordict/stable/",
            "abc": "https://docs.python.org/3/library/abc.html",
            "enum": "https://docs.python.org/3/library/enum.html",
            "typing": "https://docs.python.org/3/library/typing.html",
            "dataclasses": "https://docs.python.org/3/library/dataclasses.html",
            "pathlib": "https://docs.python.org/3/library/pathlib.html"}


def _find(target: str, module: str | None, cls: str | None):
    """The Python object a reference names: ``target`` as written, else inside the class or
    module the reference is written in (a docstring's own context); None if there is none."""
    import importlib

    tries = [target]
    if module:
        if cls:
            tries.append(f"{module}.{cls}.{target}")
        tries.append(f"{module}.{target}")
    for path in tries:
        parts = path.split(".")
        for i in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:i]))
            except Exception:
                continue
            try:
                for p in parts[i:]:
                    obj = getattr(obj, p)
            except AttributeError:
                break
            return path, obj
    return None


def _resolve(app, env, node, contnode):
    """A reference that names an object by another path than the one it is documented under
    (a package's re-export, a name inside the docstring's module, the one documented object of
    that name in the package) links to where it is documented; an object of a library this one
    builds on links to that library's docs."""
    from docutils import nodes

    if node.get("refdomain") != "py":
        return None
    domain = env.get_domain("py")

    def link(name):
        ref = domain.resolve_any_xref(env, node["refdoc"], app.builder, name, node, contnode)
        return ref[0][1] if ref else None

    target = node["reftarget"].lstrip("~")
    module, cls = node.get("py:module"), node.get("py:class")
    found = _find(target, module, cls)
    canon = None
    if found is not None:
        path, obj = found
        if isinstance(obj, type(sys)):
            canon = obj.__name__
        elif getattr(obj, "__module__", None) and getattr(obj, "__qualname__", None):
            canon = f"{obj.__module__}.{obj.__qualname__}"
        for name in {canon, path} - {None, target}:
            if ref := link(name):
                return ref
    if cls and module and "." not in target:  # an attribute a base class of another library has
        here = _find(f"{module}.{cls}", None, None)
        for base in getattr(here[1], "__mro__", ()) if here else ():
            if target in vars(base) and base.__module__.split(".")[0] in EXTERNAL:
                canon = f"{base.__module__}.{base.__qualname__}.{target}"
                break
    tops = {target.split(".")[0], (module or "").split(".")[0]}
    for suffix in ("." + target, "." + target.rsplit(".", 1)[-1]):
        hits = [k for k in domain.objects if k.endswith(suffix) and k.split(".")[0] in tops]
        if len(hits) == 1:  # the one documented object of that name in the package
            if ref := link(hits[0]):
                return ref
    root = (canon or target).split(".")[0]
    if root in EXTERNAL:
        ref = nodes.reference("", "", internal=False, refuri=EXTERNAL[root],
                              reftitle=canon or target)
        ref.append(contnode)
        return ref
    return None


def _napoleon_not_on_attributes(app):
    """Napoleon reads an attribute's or property's first line ``x: y`` as ``type: text``; this
    project's attribute docstrings are sentences, so napoleon parses only the other kinds."""
    from sphinx.ext.napoleon import _process_docstring

    listeners = app.events.listeners["autodoc-process-docstring"]
    for listener in listeners:
        if listener.handler is _process_docstring:
            def only_others(app, what, name, obj, options, lines, _h=_process_docstring):
                if what not in ("attribute", "property", "data"):
                    _h(app, what, name, obj, options, lines)
            listeners[listeners.index(listener)] = listener._replace(handler=only_others)


_SECTION = re.compile(r"^(\s*)(Args|Arguments|Attributes|Parameters|Keyword Args|"
                      r"Keyword Arguments|Other Parameters):\s*$")
_JOINT = re.compile(r"^(\s+)(\*{0,2}\w+(?:\s*,\s*\*{0,2}\w+)+)\s*:(\s.*|)$")


def _split_joint_fields(app, what, name, obj, options, lines):
    """``a, b: text`` in a Google section (Args, Attributes, ...) becomes one entry per name,
    each with the text: napoleon and Sphinx's field lists would read ``a,`` as ``b``'s type
    (``b (a,) -- text``). Runs before napoleon."""
    out, i, head, entry = [], 0, None, None  # the open section's indent, its entries'
    while i < len(lines):
        line = lines[i]
        indent = len(line) - len(line.lstrip())
        if m := _SECTION.match(line):
            out.append(line)
            head, entry = len(m.group(1)), None
            i += 1
            continue
        if line.strip() and head is not None:
            if indent <= head:
                head = entry = None  # the section ended
            elif entry is None:
                entry = indent  # its first entry sets the entries' indent
        m = _JOINT.match(line) if entry is not None and indent == entry else None
        if m is None:
            out.append(line)
            i += 1
            continue
        j = i + 1  # the entry's continuation lines: deeper than it, or blank
        while j < len(lines) and (not lines[j].strip() or
                                  len(lines[j]) - len(lines[j].lstrip()) > entry):
            j += 1
        while j > i + 1 and not lines[j - 1].strip():
            j -= 1  # trailing blanks stay after the split entries
        for n in (x.strip() for x in m.group(2).split(",")):
            out.append(f"{m.group(1)}{n}:{m.group(3)}")
            out.extend(lines[i + 1:j])
        i = j
    lines[:] = out


def _generate(app):
    import api_pages
    import cards
    import gallery_page

    cards.write_all(DOCS / "envs")
    api_pages.write_all(DOCS / "api")
    gallery_page.write(DOCS / "gallery.md")


def setup(app):
    app.connect("builder-inited", _generate)
    app.connect("builder-inited", _napoleon_not_on_attributes)
    app.connect("autodoc-process-docstring", _split_joint_fields, priority=400)
    app.connect("missing-reference", _resolve)

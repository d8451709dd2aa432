"""MkDocs hook: on the rules page, every rule tag has its own anchor (``rules.md#T3b``).

RULES.md, which the rules page includes as it is, defines a tag by opening a list item
with it in bold (``- **T3b** against a potion ...``). This hook gives that bold tag the
id of the tag, so that the glossary and other pages link to one rule, and MkDocs'
anchor validation (``validation: links: anchors``) checks those links like any other.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as etree

from markdown import Extension, Markdown
from markdown.treeprocessors import Treeprocessor

RULES_PAGE = "rules.md"
TAG = re.compile(r"[RTV][1-9](?:\.[1-9])?[a-c]?")
_page: list[str] = [""]  # the page being rendered (MkDocs renders one page at a time)


class _TagAnchors(Treeprocessor):
    def run(self, root: etree.Element) -> None:
        if _page[0] != RULES_PAGE:
            return
        seen: set[str] = set()
        for item in root.iter("li"):
            # A tight list item holds the bold tag; a loose one holds it in a paragraph.
            holder = item[0] if len(item) and item[0].tag == "p" and not item.text else item
            if (holder.text or "").strip() or not len(holder):
                continue
            first = holder[0]
            tag = (first.text or "").strip()
            if first.tag == "strong" and TAG.fullmatch(tag) and tag not in seen:
                first.set("id", tag)
                seen.add(tag)


class _TagAnchorsExtension(Extension):
    def extendMarkdown(self, md: Markdown) -> None:  # Markdown's name for it
        # Before MkDocs collects the page's anchors (priority 5, as the toc).
        md.treeprocessors.register(_TagAnchors(md), "rule_tag_anchors", 6)


def on_config(config):
    config.markdown_extensions.append(_TagAnchorsExtension())
    return config


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ARG001 - MkDocs' signature
    _page[0] = page.file.src_uri
    return markdown

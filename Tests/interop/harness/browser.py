"""Headless Chromium (Debian's `chromium`) for pages a person reads: the DOM after rendering,
and a PNG screenshot to look at."""
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path


def chromium_binary():
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _run(arguments: list, profile: Path, timeout: float) -> subprocess.CompletedProcess:
    binary = chromium_binary()
    # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
    command = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
               "--no-first-run", "--disable-extensions", f"--user-data-dir={profile}", *arguments]
    return subprocess.run(command, capture_output=True, timeout=timeout, check=True)


def dump_dom(url: str, profile: Path, timeout: float = 60.0) -> str:
    return _run(["--dump-dom", url], profile, timeout).stdout.decode()


def screenshot(url: str, path: Path, profile: Path, size=(1400, 1600), timeout: float = 60.0) -> Path:
    _run([f"--screenshot={path}", f"--window-size={size[0]},{size[1]}", "--hide-scrollbars", url], profile, timeout)
    return path


class Element:
    def __init__(self, tag: str, attributes: dict, parent):
        self.tag = tag
        self.attributes = attributes
        self.parent = parent
        self.children = []
        self.text_parts = []

    @property
    def classes(self) -> set:
        return set((self.attributes.get("class") or "").split())

    def text(self) -> str:
        return "".join(self.text_parts + [child.text() for child in self.children]).strip()

    def walk(self):
        yield self
        for child in self.children:
            yield from child.walk()

    def find_all(self, tag: str = None, cls: str = None, **attributes) -> list:
        return [element for element in self.walk()
                if (tag is None or element.tag == tag) and (cls is None or cls in element.classes)
                and all(element.attributes.get(key.replace("_", "-")) == value for key, value in attributes.items())]

    def find(self, tag: str = None, cls: str = None, **attributes):
        found = self.find_all(tag, cls, **attributes)
        return found[0] if found else None


class _TreeBuilder(HTMLParser):
    VOID = {"meta", "br", "img", "input", "link", "hr", "col", "area", "base", "wbr", "source"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {}, None)
        self.current = self.root

    def handle_starttag(self, tag, attrs):
        element = Element(tag, dict(attrs), self.current)
        self.current.children.append(element)
        if tag not in self.VOID:
            self.current = element

    def handle_endtag(self, tag):
        node = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.current = node.parent

    def handle_data(self, data):
        self.current.text_parts.append(data)


def parse(html: str) -> Element:
    builder = _TreeBuilder()
    builder.feed(html)
    return builder.root

"""`npx --yes @vscode/vsce package` builds a `.vsix` whose manifest and contents are what VS Code needs."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path
from typing import Any

import pytest

NODE_BUILTINS = {
    "assert", "buffer", "child_process", "crypto", "events", "fs", "fs/promises", "net", "os", "path",
    "process", "stream", "string_decoder", "timers", "tty", "url", "util", "worker_threads", "zlib",
}  # fmt: skip


@pytest.fixture(scope="module")
def archive(vsix: Path) -> zipfile.ZipFile:
    with zipfile.ZipFile(vsix) as opened:
        assert opened.testzip() is None, "the .vsix zip is corrupt"
    return zipfile.ZipFile(vsix)


@pytest.fixture(scope="module")
def manifest(archive: zipfile.ZipFile) -> dict[str, Any]:
    return json.loads(archive.read("extension/package.json"))


def test_contents_are_the_bundle_and_docs_only(archive: zipfile.ZipFile) -> None:
    names = set(archive.namelist())
    assert {
        "extension.vsixmanifest",
        "[Content_Types].xml",
        "extension/package.json",
        "extension/dist/extension.js",
        "extension/readme.md",
        "extension/LICENSE.txt",
    } <= names
    # Bundled by esbuild: no sources, tests, node_modules or build scripts ship.
    unexpected = [
        n for n in names if re.match(r"extension/(src|test|out|node_modules|scripts)/|.*\.ts$", n)
    ]
    assert unexpected == []


def test_bundle_requires_only_vscode_and_node_builtins(archive: zipfile.ZipFile) -> None:
    bundle = archive.read("extension/dist/extension.js").decode()
    required = set(re.findall(r"""require\(["']([^"']+)["']\)""", bundle))
    external = {name.removeprefix("node:") for name in required} - NODE_BUILTINS - {"vscode"}
    assert external == set(), f"the bundle needs modules that are not shipped: {sorted(external)}"
    assert "vscode" in required


def test_manifest_entry_point_commands_and_settings(
    manifest: dict[str, Any], archive: zipfile.ZipFile
) -> None:
    assert manifest["name"] == "rewardkit"
    assert manifest["main"] == "./dist/extension.js"
    assert "extension/dist/extension.js" in archive.namelist()
    commands = {
        c["command"]: f"{c['category']}: {c['title']}" for c in manifest["contributes"]["commands"]
    }
    assert commands == {
        "rewardkit.restart": "rewardkit: Restart Server",
        "rewardkit.showOutput": "rewardkit: Show Output",
    }
    settings = manifest["contributes"]["configuration"]["properties"]
    assert {
        "rewardkit.enable",
        "rewardkit.interpreter",
        "rewardkit.taskFields",
        "rewardkit.args",
        "rewardkit.trace.server",
    } <= set(settings)
    assert settings["rewardkit.trace.server"]["enum"] == ["off", "messages", "verbose"]
    assert settings["rewardkit.interpreter"]["default"] == []


def test_activates_on_python_and_pyproject_without_requiring_the_python_extension(
    manifest: dict[str, Any],
) -> None:
    events = manifest["activationEvents"]
    assert "onLanguage:python" in events
    assert "workspaceContains:pyproject.toml" in events
    # A hard dependency never activates offline; the Python extension is looked up at run time.
    assert "extensionDependencies" not in manifest
    assert "extensionPack" not in manifest


def test_vsix_manifest_identity_matches_package_json(
    manifest: dict[str, Any], archive: zipfile.ZipFile
) -> None:
    root = ET.fromstring(archive.read("extension.vsixmanifest"))
    ns = {"v": "http://schemas.microsoft.com/developer/vsx-schema/2011"}
    identity = root.find("v:Metadata/v:Identity", ns)
    assert identity is not None
    assert identity.get("Id") == manifest["name"]
    assert identity.get("Publisher") == manifest["publisher"]
    assert identity.get("Version") == manifest["version"]
    properties = {
        p.get("Id"): p.get("Value") for p in root.iterfind("v:Metadata/v:Properties/v:Property", ns)
    }
    assert properties["Microsoft.VisualStudio.Code.Engine"] == manifest["engines"]["vscode"]
    assert properties.get("Microsoft.VisualStudio.Code.ExtensionDependencies", "") == ""

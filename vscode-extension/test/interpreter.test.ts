/** Interpreter resolution: setting, then the Python extension, then python3 on PATH. */
import { strict as assert } from "node:assert";
import { describe, it } from "node:test";

import { describeInterpreter, findExecutableOnPath, pathInterpreterNames, resolveInterpreter } from "../src/common/interpreter";

const never = (): string | undefined => {
  throw new Error("PATH must not be searched when an earlier source answers");
};

describe("resolveInterpreter", () => {
  it("prefers the rewardkit.interpreter setting over everything else", () => {
    const result = resolveInterpreter({ setting: ["/opt/py/bin/python", "-X", "utf8"], pythonExtension: "/ext/python", findOnPath: never });
    assert.deepEqual(result, { kind: "found", interpreter: { command: ["/opt/py/bin/python", "-X", "utf8"], source: "setting" } });
  });

  it("uses the Python extension's selected interpreter when the setting is empty", () => {
    const result = resolveInterpreter({ setting: [], pythonExtension: "/home/me/.venv/bin/python", findOnPath: never });
    assert.deepEqual(result, { kind: "found", interpreter: { command: ["/home/me/.venv/bin/python"], source: "python-extension" } });
  });

  it("falls back to python3 on PATH without the Python extension", () => {
    const result = resolveInterpreter({ setting: [], pythonExtension: undefined, findOnPath: () => "/usr/bin/python3" });
    assert.deepEqual(result, { kind: "found", interpreter: { command: ["/usr/bin/python3"], source: "path" } });
  });

  it("treats a blank Python extension answer as no answer", () => {
    const result = resolveInterpreter({ setting: [], pythonExtension: "  ", findOnPath: () => "/usr/bin/python3" });
    assert.equal(result.kind === "found" && result.interpreter.source, "path");
  });

  it("explains what to do when no interpreter is found anywhere", () => {
    const result = resolveInterpreter({ setting: [], findOnPath: () => undefined });
    assert.equal(result.kind, "not-found");
    assert.match(result.kind === "not-found" ? result.reason : "", /rewardkit\.interpreter/);
  });
});

describe("findExecutableOnPath", () => {
  it("returns the first executable match in PATH order", () => {
    const present = new Set(["/b/python3", "/c/python3"]);
    const found = findExecutableOnPath(["python3"], "/a:/b:/c", "linux", (candidate) => present.has(candidate));
    assert.equal(found, "/b/python3");
  });

  it("skips empty PATH entries and answers undefined when nothing matches", () => {
    assert.equal(findExecutableOnPath(["python3"], "::/nowhere", "linux", () => false), undefined);
    assert.equal(findExecutableOnPath(["python3"], undefined, "linux", () => true), undefined);
  });

  it("uses ; and backslashes on Windows, trying python.exe first", () => {
    const names = pathInterpreterNames("win32");
    assert.equal(names[0], "python.exe");
    const found = findExecutableOnPath(names, "C:\\Tools;C:\\Python312", "win32", (candidate) => candidate === "C:\\Python312\\python.exe");
    assert.equal(found, "C:\\Python312\\python.exe");
  });

  it("finds a real python3 on this machine's PATH", async () => {
    const fs = await import("node:fs");
    const found = findExecutableOnPath(pathInterpreterNames(process.platform), process.env.PATH, process.platform, (candidate) => {
      try {
        fs.accessSync(candidate, fs.constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
    assert.ok(found?.endsWith("python3"), `python3 on PATH, got ${String(found)}`);
  });
});

describe("describeInterpreter", () => {
  it("names the source of the interpreter", () => {
    assert.equal(describeInterpreter({ command: ["/x/python"], source: "python-extension" }), "/x/python (selected in the Python extension)");
  });
});

/**
 * The server's stderr arrives in arbitrary chunks; a log channel writes every chunk as its own
 * entry. `LineBuffer` joins chunks into whole lines and remembers the last ones, so a failure
 * notification can quote the error the server printed (e.g. a Python traceback's last line).
 */

export class LineBuffer {
  private pending = "";
  private readonly recent: string[] = [];

  constructor(private readonly keep = 50) {}

  /** Add a chunk; return the lines it completed (without line breaks). */
  push(chunk: string): string[] {
    const parts = (this.pending + chunk).split(/\r?\n/);
    this.pending = parts.pop() ?? "";
    this.remember(parts);
    return parts;
  }

  /** Return the unterminated rest as a line (if any) and clear it. */
  flush(): string[] {
    if (this.pending === "") {
      return [];
    }
    const rest = [this.pending];
    this.pending = "";
    this.remember(rest);
    return rest;
  }

  private remember(lines: string[]): void {
    this.recent.push(...lines.filter((line) => line.trim() !== ""));
    this.recent.splice(0, Math.max(0, this.recent.length - this.keep));
  }

  /**
   * The line that best explains a crash: the last Python exception line
   * (`ModuleNotFoundError: ...`), else the last line the server itself printed.
   */
  lastError(): string | undefined {
    const lines = [...this.recent, ...(this.pending.trim() ? [this.pending] : [])];
    const exception = [...lines].reverse().find((line) => /^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b.*/.test(line.trim()));
    if (exception !== undefined) {
      return exception.trim();
    }
    // Lines starting with "[" are the language client's own ("[Error - 10:00:00] ...").
    return [...lines].reverse().find((line) => !line.startsWith("["))?.trim();
  }

  /** Forget everything (a new server process starts). */
  clear(): void {
    this.pending = "";
    this.recent.length = 0;
  }
}

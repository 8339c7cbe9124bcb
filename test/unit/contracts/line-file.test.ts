import { closeSync, openSync, readSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ContractError, LineError } from "../../../src/contracts/json-line.ts";
import { boundedLines, fileLines, type ReadBytes } from "../../../src/contracts/line-file.ts";
import { temporaryDir } from "../../helpers/temporary-dirs.ts";

const WHAT = "a client's -json output";

/** Reads `chunks` one per call, as a pipe gives them. */
function chunked(chunks: readonly Buffer[]): ReadBytes {
  const queue = [...chunks];
  return (buffer) => {
    const next = queue.shift();
    if (next === undefined) return 0;
    buffer.set(next);
    return next.length;
  };
}

describe("a file read line by line with bounded memory", () => {
  it("gives its lines, a line split over reads (a character's bytes too) whole, the last line without its newline", () => {
    const euro = Buffer.from("€");
    const read = chunked([
      Buffer.from("a\nb"),
      Buffer.from("c\n\n"),
      Buffer.concat([Buffer.from("x"), euro.subarray(0, 1)]),
      euro.subarray(1),
    ]);
    expect([...boundedLines("f", read, { maxLineBytes: 10, maxBytes: 100 }, WHAT)]).toEqual(["a", "bc", "", "x€"]);
  });

  it("stops reading /dev/zero (0 bytes by stat, never ending) at the line cap, naming the file, the line and the cap", () => {
    const fd = openSync("/dev/zero", "r");
    let bytesRead = 0;
    const counting: ReadBytes = (buffer) => {
      const got = readSync(fd, buffer);
      bytesRead += got;
      return got;
    };
    try {
      const lines = boundedLines("/dev/zero", counting, { maxLineBytes: 1 << 20, maxBytes: 256 << 20 }, WHAT);
      expect(() => [...lines]).toThrow(new LineError({ file: "/dev/zero", line: 1 }, `a line longer than 1 MiB (is this ${WHAT}?)`));
    } finally {
      closeSync(fd);
    }
    // One read (64 KiB) past the cap at most.
    expect(bytesRead).toBeGreaterThan(1 << 20);
    expect(bytesRead).toBeLessThanOrEqual((1 << 20) + (64 << 10));
  });

  it("refuses a file longer than its cap, and one it cannot read, naming it", () => {
    const dir = temporaryDir();
    const file = join(dir, "long.log");
    writeFileSync(file, "line\n".repeat(1_000));
    expect(() => [...fileLines(file, { maxLineBytes: 100, maxBytes: 1 << 20 }, WHAT)]).not.toThrow();
    expect(() => [...fileLines(file, { maxLineBytes: 100, maxBytes: 4_000 }, WHAT)]).toThrow(
      new ContractError(`${file}: longer than 4000 bytes (is this ${WHAT}?)`),
    );
    expect(() => [...fileLines(dir, { maxLineBytes: 100, maxBytes: 100 }, WHAT)]).toThrow(new ContractError(`cannot read ${dir}: EISDIR`));
    expect(() => [...fileLines(join(dir, "none"), { maxLineBytes: 100, maxBytes: 100 }, WHAT)]).toThrow(
      `cannot read ${join(dir, "none")}: ENOENT`,
    );
  });
});

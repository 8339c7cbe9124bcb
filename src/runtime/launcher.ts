import { existsSync } from "node:fs";
import { resolve } from "node:path";

/** The programs that the scenario runner starts as processes of their own. */
export type LaunchedProgram = "server" | "client";

export interface Launch {
  readonly command: string;
  readonly args: readonly string[];
}

/** How to start one of the programs as a process of its own. */
export type Launcher = (program: LaunchedProgram) => Launch;

/**
 * In a checkout, the root shims (`./server`, `./client`), exactly as a person runs them. In
 * an installed package, which has no shims, the package's own bin: `node <bin> server`.
 */
export function defaultLauncher(): Launcher {
  // Two folders up from src/runtime; three from a shim's bundle in node_modules/.cache/thundering-herd.
  for (const up of ["../..", "../../.."]) {
    const root = resolve(import.meta.dirname, up);
    if (existsSync(resolve(root, "server")) && existsSync(resolve(root, "scripts/launch.sh"))) {
      return (program) => ({ command: resolve(root, program), args: [] });
    }
  }
  const bin = resolve(import.meta.dirname, "../bin/thundering-herd.js");
  return (program) => ({ command: process.execPath, args: [bin, program] });
}

import { ChildProgram } from "../src/runtime/child-program.ts";

/**
 * The programs a benchmark starts, each in its own process group (ChildProgram), killed by it
 * when the benchmark is interrupted (Ctrl-C, SIGTERM) or fails: `start` them here, `killAll` on error.
 */
export class TrackedPrograms {
  private readonly running = new Set<ChildProgram>();

  constructor() {
    process.on("SIGINT", () => this.exit(130));
    process.on("SIGTERM", () => this.exit(143));
  }

  start(name: string, command: string, args: readonly string[], options: { cwd?: string } = {}): ChildProgram {
    return this.track(new ChildProgram(name, command, args, options));
  }

  /** A program started elsewhere, killed with the others until it exits. */
  track(program: ChildProgram): ChildProgram {
    this.running.add(program);
    void program.exited.then(() => this.running.delete(program));
    return program;
  }

  killAll(): void {
    for (const program of this.running) program.kill();
  }

  private exit(code: number): void {
    this.killAll();
    process.exit(code);
  }
}

import { describeFailure } from "../../src/cli/usage-error.ts";
import { main } from "../../src/probe/main.ts";
import { capturedIo } from "./captured-io.ts";

export interface ProbeEnd {
  readonly exitCode: number;
  readonly stdoutLines: readonly string[];
  /** What the entry point would print: the probe's own lines, then its failure's as describeFailure formats it. */
  readonly stderrLines: readonly string[];
}

/** Runs the probe's main in this process, as its entry point would, with captured output. */
export async function probeInProcess(args: readonly string[]): Promise<ProbeEnd> {
  const { io, stdout, stderr } = capturedIo();
  let exitCode: number;
  let failure = "";
  try {
    exitCode = await main(args, io);
  } catch (error) {
    const described = describeFailure("probe", error);
    exitCode = described.exitCode;
    failure = described.text;
  }
  const lines = (text: string) => text.split("\n").filter((line) => line !== "");
  return { exitCode, stdoutLines: lines(stdout()), stderrLines: lines(stderr() + failure) };
}

import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

/** CPU and memory of another process, read from Linux's /proc, for the benchmarks. */
export const CLOCK_TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** utime + stime of a process so far, in seconds. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // The command name may contain spaces; fields after it are space-separated.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

/** Busy time of the whole machine (all CPUs, everything but idle and iowait), in seconds. */
export function machineBusySeconds(): number {
  const line = readFileSync("/proc/stat", "utf8").split("\n", 1)[0] ?? "";
  // cpu user nice system idle iowait irq softirq steal (guest time is inside user already)
  const ticks = line.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = ticks.reduce((sum, value) => sum + value, 0);
  return (total - (ticks[3] ?? 0) - (ticks[4] ?? 0)) / CLOCK_TICKS_PER_SECOND;
}

/** Resident (VmRSS) and peak resident (VmHWM) memory, in MB. */
export function memoryMb(pid: number): { rssMb: number; peakMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN) / 1024;
  return { rssMb: field("VmRSS"), peakMb: field("VmHWM") };
}

import { spawn } from "node:child_process";

/**
 * Asks the desktop to open `url` in a browser (xdg-open, open, start). Where there is no
 * such command or no browser, it says so through `say` and the program carries on.
 */
export function openInBrowser(url: string, say: (message: string) => void): void {
  const [command, args] =
    process.platform === "darwin"
      ? ["open", [url]]
      : process.platform === "win32"
        ? ["cmd", ["/c", "start", "", url]]
        : ["xdg-open", [url]];
  try {
    const child = spawn(command, args, { stdio: "ignore", detached: true });
    child.once("error", () => say(`could not run ${command} to open a browser; open ${url} yourself`));
    // xdg-open exits non-zero when it finds no browser (exit 3 on a machine without a desktop).
    child.once("exit", (code) => {
      if (code !== 0 && code !== null) say(`${command} found no browser (exit ${code}); open ${url} yourself`);
    });
    child.unref();
  } catch {
    say(`could not run ${command} to open a browser; open ${url} yourself`);
  }
}

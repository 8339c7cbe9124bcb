// Headless Chromium for the tests and scripts/dashboard-screenshot.ts; in harness/ because
// test/ and scripts/ never import each other (harness/README.md).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";

/** Debian's Chromium (`apt-get install chromium`); `.ci/run` installs it when missing. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/**
 * Flags that let Chromium run headless as root on a machine without a network: no
 * sandbox, no GPU, and none of the background connections it would make at start.
 */
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export interface Browser {
  readonly context: BrowserContext;
  /** A new page whose console errors and uncaught exceptions are collected in `errors`. */
  newPage(): Promise<{ page: Page; errors: string[] }>;
  /** Closes Chromium (its whole process tree) and removes its profile. */
  close(): Promise<void>;
}

/** Starts headless Chromium with a fresh profile in a temporary folder. */
export async function launchBrowser(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), "thundering-herd-chromium-"));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1200, height: 900 },
    });
  } catch (error) {
    rmSync(profile, { recursive: true, force: true });
    throw new Error(`could not start ${CHROMIUM} (install it with: apt-get install -y chromium): ${(error as Error).message}`);
  }
  return {
    context,
    async newPage() {
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("console", (message) => {
        if (message.type() === "error") errors.push(`console: ${message.text()}`);
      });
      page.on("pageerror", (error) => errors.push(`page error: ${error.message}`));
      return { page, errors };
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

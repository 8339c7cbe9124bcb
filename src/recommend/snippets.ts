import { awsCodeRenderer } from "./snippets/aws-code.ts";
import { awsSettingsRenderer } from "./snippets/aws-settings.ts";
import { cockatielRenderer } from "./snippets/cockatiel.ts";
import { envoyRenderer } from "./snippets/envoy.ts";
import { grpcRenderer } from "./snippets/grpc.ts";
import { pRetryRenderer } from "./snippets/p-retry.ts";
import type { RetryIntent, Snippet, SnippetRenderer } from "./snippets/shared.ts";
import { thunderingHerdRenderer } from "./snippets/thundering-herd.ts";

/*
 * The winner's settings as configuration for the systems people run. Each renderer
 * (src/recommend/snippets/<target>.ts) maps what was simulated onto what its system can say, and
 * says so in notes where it cannot express it exactly (and what the closest setting is); what
 * they share is src/recommend/snippets/shared.ts.
 */

export { GRPC_MAX_ATTEMPTS } from "./snippets/grpc.ts";
export { firstWait, intentOf, protoDuration, type RetryIntent, type Snippet, type SnippetRenderer } from "./snippets/shared.ts";

/**
 * Every system the winner's settings are written for, one renderer each, in the order choose
 * prints them. A new one: its file in src/recommend/snippets/, its id in Snippet's id
 * (snippets/shared.ts) and its line here (docs/design.md).
 */
export const SNIPPET_RENDERERS: readonly SnippetRenderer[] = [
  grpcRenderer,
  envoyRenderer,
  awsSettingsRenderer,
  awsCodeRenderer,
  cockatielRenderer,
  pRetryRenderer,
  thunderingHerdRenderer,
];

/** Every snippet for a winner; a winner that hedges gets gRPC's hedgingPolicy alone, the others' settings being retries. */
export function snippetsFor(intent: RetryIntent): Snippet[] {
  const hedges = intent.hedgeDelayMs !== undefined;
  return SNIPPET_RENDERERS.filter((renderer) => !hedges || renderer.writesHedging).map((renderer) => renderer.render(intent));
}

/** A snippet as the terminal shows it: its title and file, its notes, its text. */
export function snippetText(snippet: Snippet): string {
  const notes = snippet.notes.map((note) => `  note: ${note}\n`).join("");
  return `--- ${snippet.title} (${snippet.file})\n${notes}${snippet.text}\n`;
}

/**
 * A URL as a program may print or write it: its user name and password (http://user:pass@host/)
 * replaced by `***`, so that credentials never reach a terminal, a log, a report or a scenario
 * file. A URL without them comes back exactly as given; text that is not a URL loses whatever
 * stands between `//` and an `@`.
 */
export function redactUrl(url: string | URL): string {
  const text = String(url);
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    return redactCredentials(text);
  }
  if (parsed.username === "" && parsed.password === "") return text;
  parsed.username = "***";
  parsed.password = "";
  return parsed.href;
}

/** Any text with every `//user:password@` in it (a list of URLs, a flag's value) shown as `//***@`. */
export function redactCredentials(text: string): string {
  // Up to the last @ before the host's path: a password may hold an @, a comma or a space of its own.
  return text.replace(/\/\/[^/?#]*@/g, "//***@");
}

/*
 * A URL of a service to call, checked as every program that takes one checks it: ./client -url,
 * the demo's -target, the probe's argument, ./server -upstream.
 */

/** The port an http(s) URL's text spells out, if any; the URL parser refuses one over 65535 without saying it is the port. */
const SPELLED_PORT = /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/?#]*@)?(?:\[[^\]]*\]|[^:/?#[\]]*):(\d+)(?:[/?#]|$)/i;

/** Why `text` is no URL the programs can send to: not http(s), or a port out of range (named as the port). */
export function checkUrl(text: string): string | undefined {
  const port = SPELLED_PORT.exec(text)?.[1];
  if (port !== undefined && !(Number(port) >= 1 && Number(port) <= 65_535)) return `port ${port} is out of range (1 to 65535)`;
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:" ? undefined : "must be an http:// or https:// URL";
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ERR_INVALID_URL") throw error;
    return "must be an http:// or https:// URL";
  }
}

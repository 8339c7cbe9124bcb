/**
 * Rows as an aligned text table for the terminal: the first row is the header, underlined
 * with dashes; columns padded to their widest cell, two spaces apart, no trailing spaces.
 */
export function textTable(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join("  ")
      .trimEnd();
  return [line(rows[0]!), line(widths.map((width) => "-".repeat(width))), ...rows.slice(1).map(line)].join("\n");
}

/** The same rows as a Markdown table, for the README: the first row is the header. */
export function markdownTable(rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(" | ")} |`;
  return [line(rows[0]!), line(rows[0]!.map(() => "---")), ...rows.slice(1).map(line)].join("\n");
}

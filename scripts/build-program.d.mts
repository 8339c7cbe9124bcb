/** Builds `name` (and worker-entry, where `root` has one) from `root` into `outdir` as <name>.mjs. */
export function buildProgram(root: string, name: string, outdir: string): Promise<void>;

// The part of js-yaml (a dependency of ESLint's config loader, in the lockfile) that the
// manifest tests use; the package ships no types of its own.
declare module "js-yaml" {
  export function loadAll(text: string): unknown[];
}

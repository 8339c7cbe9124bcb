// Loaded with `node --import` by the root shims, so TypeScript runs without a build step
// and the shim can `exec node`: the pid a user sees is the program itself.
import "tsx";

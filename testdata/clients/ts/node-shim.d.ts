// node-shim.d.ts: the two Node APIs the scenario uses, so that it needs no
// @types/node.
declare const process: { env: Record<string, string | undefined> };
declare module "node:fs" {
  export function readFileSync(path: string): { toString(encoding: "base64"): string };
}
